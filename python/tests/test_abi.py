"""Every ctypes struct against the C headers: a C program generated from the ctypes
definitions prints sizeof and every offsetof, compiled with the build's C compiler."""
import ctypes
import os
import subprocess

from uscope import _lib

from .support import TempDirTest, need_env


class StructLayout(TempDirTest):
    def test_every_struct_matches_the_headers(self):
        cc = need_env("USCOPE_TEST_CC")
        include = need_env("USCOPE_INCLUDE_DIR")
        lines = ["#include <stddef.h>", "#include <stdio.h>", "#include <uscope/uscope.h>",
                 "#include <uscope/analysis.h>", "#include <uscope/convert.h>", "#include <uscope/export.h>",
                 "int main(void) {"]
        expected = []
        for cname, py in sorted(_lib.C_STRUCTS.items()):
            lines.append('  printf("%s %%zu %%zu\\n", sizeof(%s), _Alignof(%s));' % (cname, cname, cname))
            expected.append("%s %d %d" % (cname, ctypes.sizeof(py), ctypes.alignment(py)))
            for field, _ in py._fields_:
                lines.append('  printf("%s.%s %%zu\\n", offsetof(%s, %s));' % (cname, field, cname, field))
                expected.append("%s.%s %d" % (cname, field, getattr(py, field).offset))
        lines += ["  return 0;", "}"]
        src, exe = self.path("layout.c"), self.path("layout")
        with open(src, "w") as f:
            f.write("\n".join(lines) + "\n")
        subprocess.run([cc, "-std=c11", "-I", include, src, "-o", exe], check=True)
        got = subprocess.run([exe], check=True, capture_output=True, text=True).stdout.split("\n")[:-1]
        self.assertEqual(got, expected)
        self.assertGreater(len(expected), 200)

    def test_the_fields_of_a_size_prefixed_struct_are_all_there(self):
        # Options structs initialized by the library: their struct_size is the C sizeof.
        for init, cls in ((_lib.lib.uscope_writer_options_init, _lib.WriterOptions),
                          (_lib.lib.uscope_convert_options_init, _lib.ConvertOptions),
                          (_lib.lib.uscope_export_options_init, _lib.ExportOptions)):
            o = cls()
            init(ctypes.byref(o))
            self.assertEqual(o.struct_size, ctypes.sizeof(cls), cls.__name__)


class Loader(TempDirTest):
    def run_python(self, code, env):
        e = dict(os.environ)
        e.update(env)
        return subprocess.run([os.sys.executable, "-c", code], env=e, capture_output=True, text=True)

    def test_a_missing_library_is_a_clear_import_error(self):
        r = self.run_python("import uscope", {"USCOPE_LIBRARY": self.path("nowhere/libuscope.so")})
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("LibraryNotFoundError", r.stderr)
        self.assertIn("cannot load libuscope.so", r.stderr)
        self.assertIn("USCOPE_LIBRARY", r.stderr)
        self.assertIn("nowhere/libuscope.so", r.stderr)

    def test_a_file_that_is_not_the_library_is_refused(self):
        bogus = self.path("libuscope.so")
        with open(bogus, "w") as f:
            f.write("not a shared object")
        r = self.run_python("import uscope", {"USCOPE_LIBRARY": bogus})
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("cannot load libuscope.so", r.stderr)

    def test_the_library_next_to_the_package_is_found(self):
        import shutil
        import uscope
        pkg = os.path.join(self.dir, "uscope")
        shutil.copytree(os.path.dirname(uscope.__file__), pkg)
        shutil.copy(need_env("USCOPE_LIBRARY"), os.path.join(pkg, "libuscope.so"))
        r = self.run_python("import uscope; print(uscope.library_path())",
                            {"USCOPE_LIBRARY": "", "PYTHONPATH": self.dir})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), os.path.join(pkg, "libuscope.so"))
