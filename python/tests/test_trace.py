"""Write a trace with uscope.Writer, read it back with uscope.Trace."""
import struct

import uscope

from .support import CYCLES, TempDirTest, write_small


class WriteRead(TempDirTest):
    def setUp(self):
        super().setUp()
        self.file = self.path("small.uscope")
        self.ids = write_small(self.file)

    def test_info(self):
        with uscope.Trace(self.file) as t:
            i = t.info
            self.assertTrue(i.complete)
            self.assertEqual(i.compression, "lz4")
            self.assertEqual(i.time_grid_ps, 1000)
            self.assertEqual(t.period_ps, 1000)
            self.assertEqual(i.last_time_ps, (CYCLES - 1) * 1000)
            self.assertGreaterEqual(i.num_segments, 5)  # a checkpoint every 20 cycles
            self.assertEqual(i.dut, {"dut.name": "small", "run": "unit"})
            self.assertEqual([c.name for c in i.clocks], ["clk"])
            self.assertEqual([(s.name, s.protocol) for s in i.scopes], [("top", None), ("core0", "custom")])
            rob = i.storages[self.ids["rob"]]
            self.assertEqual((rob.name, rob.num_slots, rob.sparse), ("rob", 4, True))
            self.assertEqual([(f.name, f.type) for f in rob.fields], [("pc", "u64"), ("op", "enum"), ("delta", "i16")])
            self.assertEqual([p.name for p in rob.properties], ["head"])
            self.assertEqual([(e.name, e.payload_size) for e in i.event_types], [("retire", 5), ("note", 4)])

    def test_state_at(self):
        with uscope.Trace(self.file) as t:
            for c in (0, 1, 19, 20, 21, 57, CYCLES - 1):
                st = t.state_at(c)
                self.assertEqual(st.field("counter", 0, "value"), c + 1)
                self.assertEqual(st.property("rob", "head"), c % 4)
                self.assertEqual(st.field("rob", c % 4, "pc"), 0x1000 + 4 * c)
                self.assertEqual(st.field(self.ids["rob"], c % 4, 1), c % 3)
                # Signed fields come back as stored bytes, zero-extended (C API).
                self.assertEqual(st.field("core0.rob", c % 4, "delta"), (-c) & 0xFFFF)
                self.assertTrue(st.slot_valid("rob", c % 4))
                slots = st.slots("rob")
                self.assertEqual(st.occupancy("rob"), len(slots))
                self.assertEqual(slots[c % 4]["pc"], 0x1000 + 4 * c)
                st.close()
            st = t.state_at(time_ps=3000)
            self.assertEqual(st.field("counter", 0, 0), 4)
            # Past the end: the final state.
            self.assertEqual(t.state_at(10 ** 9).field("counter", 0, 0), CYCLES)

    def test_events(self):
        with uscope.Trace(self.file) as t:
            evs = list(t.events())
            retire = [e for e in evs if e[1] == self.ids["retire"]]
            self.assertEqual(len(retire), CYCLES)
            self.assertEqual(len(evs), CYCLES + 1)
            for c, (time_ps, type_id, payload) in enumerate(retire):
                self.assertEqual(time_ps, c * 1000)
                self.assertEqual(struct.unpack("<IB", payload), (c, 1 if c % 2 == 0 else 0))
                self.assertEqual(t.decode((time_ps, type_id, payload)), {"event": "retire", "id": c, "ok": c % 2 == 0})
            # A closed range of cycles, and a filter by name.
            window = list(t.events(10, 19, types=["retire"]))
            self.assertEqual([t.decode(e)["id"] for e in window], list(range(10, 20)))
            notes = list(t.events(types="note"))
            self.assertEqual(len(notes), 1)
            self.assertEqual(notes[0][0], 50 * 1000)
            self.assertEqual(t.decode(notes[0])["event"], "note")
            self.assertEqual(list(t.events(200, 300)), [])
            self.assertEqual(list(t.events(5, 4)), [])

    def test_events_survive_other_calls_on_the_reader(self):
        # The payloads of a batch are copied before the caller gets them: a state_at in the
        # middle of the iteration (which reuses the reader's buffers) does not change them.
        with uscope.Trace(self.file) as t:
            got = []
            for k, e in enumerate(t.events(types="retire")):
                if k % 7 == 0:
                    t.state_at(CYCLES - 1 - k).close()
                got.append(t.decode(e)["id"])
            self.assertEqual(got, list(range(CYCLES)))

    def test_many_batches(self):
        # More items than one fill takes (8192): the iteration spans fills and segments.
        path = self.path("many.uscope")
        s = uscope.Schema()
        s.add_clock("clk", 500)
        s.add_scope("top")
        e = s.add_event("e", [("k", "u64")])
        n = 30000
        with uscope.Writer(path, s, checkpoint_interval_ps=1_000_000) as w:
            for c in range(n // 3):
                w.begin_cycle(c * 500)
                for j in range(3):
                    w.event(e, 3 * c + j)
                w.end_cycle()
        with uscope.Trace(path) as t:
            got = [struct.unpack("<Q", p)[0] for _, _, p in t.events()]
            self.assertEqual(got, list(range(n)))
            got = [struct.unpack("<Q", p)[0] for _, _, p in t.events(100, 199)]
            self.assertEqual(got, list(range(300, 600)))

    def test_repr_html(self):
        with uscope.Trace(self.file) as t:
            h = t._repr_html_()
            self.assertTrue(h.startswith("<table"))
            for needle in ("<th style=\"text-align:left\">Segments</th>", "Storage rob", "Event retire",
                           "DUT dut.name", "small"):
                self.assertIn(needle, h)
            self.assertIn("small.uscope", repr(t))
        self.assertIn("closed", t._repr_html_())

    def test_html_is_escaped(self):
        s = uscope.Schema()
        s.add_clock("clk", 1000)
        s.add_scope("top")
        path = self.path("esc.uscope")
        with uscope.Writer(path, s, dut={"<script>": "a&b"}):
            pass
        with uscope.Trace(path) as t:
            h = t._repr_html_()
            self.assertNotIn("<script>", h)
            self.assertIn("&lt;script&gt;", h)
            self.assertIn("a&amp;b", h)

    def test_writer_stats_and_options(self):
        path = self.path("zstd.uscope")
        s = uscope.Schema()
        s.add_clock("clk", 1000)
        s.add_scope("top")
        st = s.add_storage("x", [("v", "u8")])
        with uscope.Writer(path, s, compression="zstd", strict_values=True, compress_threads=1) as w:
            self.assertEqual(w.find_storage("x"), st)
            w.begin_cycle(0)
            w.slot_set(st, 0, 0, 255)
            w.end_cycle()
            w.flush()
            stats = w.stats()
            self.assertEqual(stats["cycles"], 1)
            self.assertEqual(stats["ops"], 1)
            self.assertEqual(stats["sticky_status"], 0)
        with uscope.Trace(path) as t:
            self.assertEqual(t.info.compression, "zstd")
            self.assertEqual(t.state_at(0).field("x", 0, "v"), 255)

    def test_schema_from_json(self):
        s = uscope.Schema.from_json('{"clocks": [{"name": "clk", "period_ps": 1000}],'
                                    ' "scopes": [{"name": "top"}],'
                                    ' "storages": [{"name": "r", "scope": "top", "slots": 2,'
                                    ' "fields": [{"name": "v", "type": "u32"}]}]}')
        path = self.path("json.uscope")
        with uscope.Writer(path, s) as w:
            r = w.find_storage("r")
            w.begin_cycle(0)
            w.slot_set(r, 1, 0, 7)
            w.end_cycle()
        with uscope.Trace(path) as t:
            self.assertEqual(t.state_at(0).field("r", 1, "v"), 7)
