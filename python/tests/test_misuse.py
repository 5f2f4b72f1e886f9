"""Every misuse raises a uscope.Error subclass carrying a status and a message; none crashes."""
import os
import gc

import uscope

from .support import TempDirTest, write_small


class BadPaths(TempDirTest):
    def test_nonexistent(self):
        with self.assertRaises(uscope.IoError) as cm:
            uscope.Trace(self.path("missing.uscope"))
        e = cm.exception
        self.assertEqual(e.status, -3)
        self.assertIn("missing.uscope", e.message)
        self.assertIn("No such file", str(e))
        self.assertIsInstance(e, OSError)
        self.assertIsInstance(e, uscope.Error)

    def test_not_a_trace(self):
        p = self.path("notes.txt")
        with open(p, "w") as f:
            f.write("hello\n")
        with self.assertRaises(uscope.NotATraceError) as cm:
            uscope.Trace(p)
        self.assertEqual(cm.exception.status, -20)
        self.assertIn("expected a µScope trace", cm.exception.message)
        self.assertIn("notes.txt", cm.exception.message)

    def test_empty_file_and_directory(self):
        p = self.path("empty.uscope")
        open(p, "w").close()
        with self.assertRaises(uscope.TruncatedError) as cm:
            uscope.Trace(p)
        self.assertIn("empty", cm.exception.message)
        with self.assertRaises(uscope.IoError):
            uscope.Trace(self.dir)

    def test_truncated_trace(self):
        good = self.path("good.uscope")
        write_small(good)
        with open(good, "rb") as f:
            data = f.read()
        bad = self.path("cut.uscope")
        with open(bad, "wb") as f:
            f.write(data[:100])
        with self.assertRaises(uscope.FormatError):
            uscope.Trace(bad)

    def test_path_types(self):
        for bad in (None, 42, ["a"]):
            with self.assertRaises(uscope.ArgumentTypeError) as cm:
                uscope.Trace(bad)
            self.assertIsInstance(cm.exception, TypeError)
        with self.assertRaises(uscope.InvalidArgumentError):
            uscope.Trace("a\0b")
        with self.assertRaises(uscope.InvalidArgumentError):
            uscope.Trace("")

    def test_writer_into_a_missing_directory(self):
        s = uscope.Schema()
        s.add_clock("clk", 1000)
        s.add_scope("top")
        with self.assertRaises(uscope.IoError):
            uscope.Writer(self.path("no/such/dir/x.uscope"), s)


class ClosedHandles(TempDirTest):
    def setUp(self):
        super().setUp()
        self.file = self.path("small.uscope")
        write_small(self.file)

    def test_closed_trace(self):
        t = uscope.Trace(self.file)
        t.close()
        t.close()  # twice is fine
        self.assertTrue(t.closed)
        for call in (lambda: t.info, lambda: t.state_at(0), lambda: t.events(), lambda: t.storage_id("rob"),
                     lambda: t.analyze()):
            with self.assertRaises(uscope.BadStateError) as cm:
                call()
            self.assertEqual(cm.exception.status, -6)
            self.assertIn("closed", cm.exception.message)

    def test_state_after_its_trace_closed(self):
        t = uscope.Trace(self.file)
        st = t.state_at(5)
        t.close()  # frees the state first (the C rule: states before their reader)
        with self.assertRaises(uscope.BadStateError):
            st.field("rob", 0, 0)
        st.close()

    def test_events_iterator_after_its_trace_closed(self):
        t = uscope.Trace(self.file)
        it = t.events()
        next(it)
        t.close()
        with self.assertRaises(uscope.BadStateError):
            for _ in it:  # the rest of the current batch, then the closed reader
                pass
        it = None
        gc.collect()

    def test_abandoned_iterators_and_states_are_freed(self):
        with uscope.Trace(self.file) as t:
            for _ in range(50):
                it = t.events()
                next(it)
                t.state_at(3)
            del it
            gc.collect()
            self.assertEqual(len(list(t.events())), 101)

    def test_closed_writer(self):
        s = uscope.Schema()
        s.add_clock("clk", 1000)
        s.add_scope("top")
        w = uscope.Writer(self.path("w.uscope"), s)
        w.close()
        w.close()
        with self.assertRaises(uscope.BadStateError):
            w.begin_cycle(0)
        with self.assertRaises(uscope.BadStateError):
            w.stats()

    def test_closed_schema(self):
        s = uscope.Schema()
        s.close()
        with self.assertRaises(uscope.BadStateError):
            s.add_clock("clk", 1)
        with self.assertRaises(uscope.BadStateError):
            uscope.Writer(self.path("w.uscope"), s)


class WrongIds(TempDirTest):
    def setUp(self):
        super().setUp()
        self.file = self.path("small.uscope")
        self.ids = write_small(self.file)
        self.t = uscope.Trace(self.file)
        self.addCleanup(self.t.close)

    def test_state_ids(self):
        st = self.t.state_at(10)
        cases = [(lambda: st.field(99, 0, 0), uscope.UnknownIdError),
                 (lambda: st.field("rob", 4, 0), uscope.UnknownIdError),
                 (lambda: st.field("rob", 0, 3), uscope.UnknownIdError),
                 (lambda: st.property("rob", 1), uscope.UnknownIdError),
                 (lambda: st.field("nosuch", 0, 0), uscope.NotFoundError),
                 (lambda: st.field("rob", 0, "nosuch"), uscope.NotFoundError),
                 (lambda: st.occupancy(1000), uscope.UnknownIdError)]
        for call, cls in cases:
            with self.assertRaises(cls) as cm:
                call()
            self.assertLess(cm.exception.status, 0)
            self.assertTrue(cm.exception.message)
        with self.assertRaises(LookupError):  # the built-in family too
            st.field("nosuch", 0, 0)

    def test_event_filter_ids(self):
        with self.assertRaises(uscope.NotFoundError):
            self.t.events(types=["nosuch"])
        with self.assertRaises(uscope.InvalidArgumentError):
            self.t.events(types=[-1])

    def test_decode_misuse(self):
        ev = next(iter(self.t.events()))
        with self.assertRaises(uscope.ArgumentTypeError):
            self.t.decode(5)
        with self.assertRaises(uscope.UnknownIdError):
            self.t.decode((ev[0], 99, ev[2]))
        with self.assertRaises(uscope.PayloadSizeError):
            self.t.decode((ev[0], ev[1], ev[2] + b"x"))

    def test_no_cpu_scope(self):
        with self.assertRaises(uscope.NotFoundError) as cm:
            self.t.analyze()
        self.assertIn("cpu", cm.exception.message)


class WrongTypesAndRanges(TempDirTest):
    def setUp(self):
        super().setUp()
        self.file = self.path("small.uscope")
        write_small(self.file)
        self.t = uscope.Trace(self.file)
        self.addCleanup(self.t.close)

    def test_reader_arguments(self):
        st = self.t.state_at(10)
        for call in (lambda: self.t.state_at("10"), lambda: self.t.state_at(1.5), lambda: st.field("rob", "0", 0),
                     lambda: st.field("rob", None, 0), lambda: self.t.events(start="a"),
                     lambda: st.slot_valid("rob", True)):
            with self.assertRaises(uscope.ArgumentTypeError):
                call()
        for call in (lambda: self.t.state_at(-1), lambda: self.t.state_at(1 << 64),
                     lambda: self.t.state_at(1 << 60),  # cycles x 1000 ps overflows 64 bits
                     lambda: st.field("rob", 1 << 16, 0), lambda: st.field("rob", -1, 0),
                     lambda: st.field(70000, 0, 0), lambda: self.t.events(-5),
                     lambda: self.t.state_at(), lambda: self.t.state_at(1, time_ps=2)):
            with self.assertRaises(uscope.InvalidArgumentError) as cm:
                call()
            self.assertEqual(cm.exception.status, -1)

    def test_schema_arguments(self):
        s = uscope.Schema()
        for call in (lambda: s.add_clock(5), lambda: s.add_clock("c", "1000"),
                     lambda: s.add_storage("x", "pc"), lambda: s.add_storage("x", [("pc",)]),
                     lambda: s.add_event("e", [("a", 3.0)])):
            with self.assertRaises(uscope.ArgumentTypeError):
                call()
        with self.assertRaises(uscope.InvalidArgumentError):
            s.add_clock("c", 1 << 32)
        with self.assertRaises(uscope.InvalidArgumentError):
            s.add_storage("x", [("pc", "u128")])
        s.add_clock("clk", 1000)
        with self.assertRaises(uscope.DuplicateError) as cm:
            s.add_clock("clk", 1000)
        self.assertIn("clk", cm.exception.message)
        with self.assertRaises(uscope.SchemaError):
            s.add_scope("child", parent=7)
        with self.assertRaises(uscope.InvalidArgumentError):
            uscope.Schema.from_json("{not json")
        with self.assertRaises(uscope.SchemaError):
            uscope.Schema.from_json('{"storages": 5}')
        with self.assertRaises(uscope.ArgumentTypeError):
            uscope.Writer(self.path("x.uscope"), "schema")

    def test_writer_misuse_is_sticky(self):
        s = uscope.Schema()
        s.add_clock("clk", 1000)
        s.add_scope("top")
        st = s.add_storage("x", [("v", "u8")], num_slots=2)
        ev = s.add_event("e", [("a", "u16")])
        path = self.path("w.uscope")
        w = uscope.Writer(path, s, strict_values=True)
        w.begin_cycle(1000)
        w.slot_set(st, 0, 0, 1)
        w.end_cycle()
        # Refused in Python, before the C call: the writer stays usable.
        with self.assertRaises(uscope.ArgumentTypeError):
            w.slot_set(st, 0, 0, "1")
        with self.assertRaises(uscope.InvalidArgumentError):
            w.slot_set(st, 0, 0, 1 << 64)
        with self.assertRaises(uscope.ValueRangeError):
            w.event(ev, 1 << 20)  # does not fit the u16 field
        with self.assertRaises(uscope.InvalidArgumentError):
            w.event(ev, 1, 2, 3)
        with self.assertRaises(uscope.TimeBackwardsError):
            w.begin_cycle(0)
        # From the library: sticky, every later call and close() raise the same.
        with self.assertRaises(uscope.TimeBackwardsError):
            w.begin_cycle(5000)
        with self.assertRaises(uscope.TimeBackwardsError) as cm:
            w.close()
        self.assertTrue(cm.exception.message)
        # The cycle before the error is in the file.
        with uscope.Trace(path) as t:
            self.assertEqual(t.state_at(1).field("x", 0, "v"), 1)

    def test_writer_per_cycle_errors(self):
        s = uscope.Schema()
        s.add_clock("clk", 1000)
        s.add_scope("top")
        st = s.add_storage("x", [("v", "u8")], num_slots=2)
        s.add_event("e", [("a", "u16")])
        cases = [(lambda w: w.slot_set(5, 0, 0, 1), uscope.UnknownIdError),
                 (lambda w: w.slot_set(st, 2, 0, 1), uscope.UnknownIdError),
                 (lambda w: w.slot_set(st, 0, 1, 1), uscope.UnknownIdError),
                 (lambda w: w.prop_set(st, 0, 1), uscope.UnknownIdError),
                 (lambda w: w.event(9, b""), uscope.UnknownIdError),
                 (lambda w: w.event(0, b"\1\2\3"), uscope.PayloadSizeError),
                 (lambda w: w.slot_set(st, 0, 0, 300), uscope.ValueRangeError),
                 (lambda w: w.begin_cycle(0), uscope.BadStateError)]
        for k, (call, cls) in enumerate(cases):
            w = uscope.Writer(self.path("w%d.uscope" % k), s, strict_values=True)
            w.begin_cycle(0)
            with self.assertRaises(cls):
                call(w)
            with self.assertRaises(cls):
                w.end_cycle()
            with self.assertRaises(cls):
                w.close()
            self.assertTrue(w.closed)
        # Outside a cycle.
        w = uscope.Writer(self.path("outside.uscope"), s)
        with self.assertRaises(uscope.BadStateError):
            w.slot_set(st, 0, 0, 1)
        with self.assertRaises(uscope.BadStateError):
            w.close()

    def test_writer_exception_in_block_is_not_masked(self):
        s = uscope.Schema()
        s.add_clock("clk", 1000)
        s.add_scope("top")
        with self.assertRaises(KeyError):
            with uscope.Writer(self.path("k.uscope"), s) as w:
                w.begin_cycle(0)
                raise KeyError("model bug")
        self.assertTrue(os.path.exists(self.path("k.uscope")))

    def test_convert_and_export_arguments(self):
        with self.assertRaises(uscope.InvalidArgumentError):
            uscope.export(self.file, self.path("o"), "nosuch")
        with self.assertRaises(uscope.ArgumentTypeError):
            uscope.export(self.file, self.path("o"), 3)
        with self.assertRaises(uscope.InvalidArgumentError):
            uscope.export(self.file, self.path("o.json"), "chrome-json", time_unit="fortnight")
        with self.assertRaises(uscope.InvalidArgumentError):
            uscope.export(self.file, self.file, "chrome-json")  # output is the input
        with self.assertRaises(uscope.IoError):
            uscope.export(self.path("missing.uscope"), self.path("o.json"), "chrome-json")
        with self.assertRaises(uscope.InvalidArgumentError):
            uscope.convert(self.file, self.path("o.jsonl"), src_format="xml")
        with self.assertRaises(uscope.Error):
            uscope.convert(self.path("missing.jsonl"), self.path("o.uscope"))
        with self.assertRaises(uscope.ArgumentTypeError):
            uscope.convert(self.file, self.path("o.jsonl"), on_issue=5)

    def test_error_attributes(self):
        e = uscope.NotFoundError(-23, "no such thing")
        self.assertEqual(e.status, -23)
        self.assertEqual(e.message, "no such thing")
        self.assertIn("no such thing", str(e))
        self.assertTrue(uscope.status_name(-23))
