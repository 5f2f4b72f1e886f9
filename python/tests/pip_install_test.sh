#!/usr/bin/env bash
# pip install the package the way a user would, offline: from a copy of python/ (so that the
# build leaves nothing in the source tree), into a --target directory, without build isolation
# (setuptools comes from the interpreter; PyPI is not reachable) and without dependencies
# (numpy is optional). Then the installed copy, and not the source tree, imports and reads a
# trace it writes.
#   pip_install_test.sh PYTHON SOURCE_DIR WORK_DIR LIBUSCOPE_SO
set -euo pipefail
python=$1 src=$2 work=$3 so=$4
rm -rf "$work"
# pip builds the package with the interpreter's own setuptools and wheel: say so if either is
# missing rather than leave pip's "invalid command 'bdist_wheel'".
"$python" -c "import importlib.util as u, sys; sys.exit(any(u.find_spec(m) is None for m in ('pip', 'setuptools', 'wheel')))" || {
  echo "pip install: $python lacks pip, setuptools or wheel (Debian: python3-pip python3-setuptools python3-wheel)" >&2
  exit 1
}
mkdir -p "$work"
cp -r "$src" "$work/src"
rm -rf "$work/src/tests"
"$python" -m pip install --no-build-isolation --no-deps --no-index --target "$work/site" "$work/src"
test -f "$work/site/uscope/__init__.py"
cd "$work"
USCOPE_LIBRARY="$so" PYTHONPATH="$work/site" "$python" - "$work/site" <<'PY'
import os, sys
import uscope
assert os.path.dirname(uscope.__file__) == os.path.join(sys.argv[1], "uscope"), uscope.__file__
s = uscope.Schema()
s.add_clock("clk", 1000)
s.add_scope("top")
e = s.add_event("tick", [("n", "u32")])
with uscope.Writer("pip.uscope", s) as w:
    for c in range(10):
        w.begin_cycle(c * 1000)
        w.event(e, c)
        w.end_cycle()
with uscope.Trace("pip.uscope") as t:
    got = [t.decode(ev)["n"] for ev in t.events()]
assert got == list(range(10)), got
print("pip install: OK (uscope %s, libuscope %s)" % (uscope.__version__, uscope.library_version()))
PY
