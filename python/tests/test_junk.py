"""Every public call with junk in each argument: only uscope.Error subclasses come out (no
ctypes.ArgumentError, no AttributeError, no crash of the interpreter)."""
import inspect
import itertools
import os

import uscope

from .support import TempDirTest, write_small

JUNK = [None, -1, 1 << 64, 1 << 16, 2 ** 31, 3.5, "", "nosuch", "a\0b", b"\xff\xfe", [], {}, object(), True]


class JunkArguments(TempDirTest):
    def setUp(self):
        super().setUp()
        # Junk strings become relative output paths ("nosuch"): they land in the scratch directory.
        self.addCleanup(os.chdir, os.getcwd())
        os.chdir(self.dir)

    def sweep(self, fn, valid):
        """Call fn with valid arguments, replacing one at a time by each junk value."""
        calls = 0
        for i in range(len(valid)):
            for junk in JUNK:
                args = list(valid)
                args[i] = junk
                try:
                    r = fn(*args)
                    if inspect.isgenerator(r) or hasattr(r, "__next__"):
                        for _ in itertools.islice(r, 3):
                            pass
                except uscope.Error:
                    pass
                calls += 1
        return calls

    def test_reader_calls(self):
        path = self.path("small.uscope")
        write_small(path)
        with uscope.Trace(path) as t:
            st = t.state_at(10)
            n = 0
            n += self.sweep(t.state_at, [5])
            n += self.sweep(t.events, [0, 10, None])
            n += self.sweep(t.storage_id, ["rob"])
            n += self.sweep(t.field_index, ["rob", "pc", False])
            n += self.sweep(t.event_type_id, ["retire"])
            n += self.sweep(st.field, ["rob", 0, "pc"])
            n += self.sweep(st.property, ["rob", "head"])
            n += self.sweep(st.slot_valid, ["rob", 0])
            n += self.sweep(st.occupancy, ["rob"])
            n += self.sweep(st.slots, ["rob"])
            n += self.sweep(t.analyze, [0, 10])
            n += self.sweep(lambda p, s: uscope.Trace(p, s).close(), [path, False])
            self.assertGreater(n, 200)

    def test_writer_calls(self):
        s = uscope.Schema()
        s.add_clock("clk", 1000)
        s.add_scope("top")
        n = 0
        n += self.sweep(s.add_clock, ["c2", 10])
        n += self.sweep(s.add_scope, ["sub", 0, None, None])
        n += self.sweep(s.add_enum, ["e", ["a", "b"]])
        n += self.sweep(s.add_storage, ["st", [("v", "u8")], 2, 0xFFFF, False, False, ()])
        n += self.sweep(s.add_event, ["ev", [("v", "u16")], 0xFFFF])
        n += self.sweep(s.add_dut_property, ["k", "v"])
        st = s.add_storage("x", [("v", "u8")], num_slots=2)
        ev = s.add_event("tick", [("v", "u16")])
        # Each junk call may make the writer's error sticky: a new writer per argument position.
        for name, valid in (("slot_set", [st, 0, 0, 1]), ("slot_add", [st, 0, 0, 1]), ("slot_clear", [st, 0]),
                            ("prop_set", [st, 0, 1]), ("event", [ev, 7]), ("string", ["s"]),
                            ("begin_cycle", [5000]), ("find_storage", ["x"]), ("find_event", ["tick"])):
            w = uscope.Writer(self.path("%s.uscope" % name), s)
            w.begin_cycle(1000)
            n += self.sweep(getattr(w, name), valid)
            try:
                w.close()
            except uscope.Error:
                pass
        n += self.sweep(lambda p, c: uscope.Writer(p, s, compression=c).close(), [self.path("o.uscope"), "lz4"])
        self.assertGreater(n, 200)

    def test_tools_calls(self):
        path = self.path("small.uscope")
        write_small(path)
        n = self.sweep(uscope.export, [path, self.path("o.json"), "chrome-json", 0, 10, "cycle", None, None, None])
        n += self.sweep(uscope.convert, [path, self.path("o.jsonl"), None, None, False, 0])
        n += self.sweep(uscope.npu_report, [path, False, 0])
        self.assertGreater(n, 100)

    def test_analysis_calls(self):
        import subprocess
        from .support import need_env
        path = self.path("pipeline.uscope")
        subprocess.run([need_env("USCOPE_EXAMPLE_PIPELINE"), path], check=True, capture_output=True)
        with uscope.Trace(path) as t:
            n = self.sweep(t.timeline, [0, 10, None])
            n += self.sweep(t.counters, [["committed_insns"], 0, 10])
            n += self.sweep(t.analyze, [0, 10])
            n += self.sweep(lambda s, e: t.cpu(s, e).close(), ["core0", None])
            self.assertGreater(n, 100)
