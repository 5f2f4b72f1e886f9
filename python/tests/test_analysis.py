"""The cpu analysis (analyze, timeline, counters) over the example pipeline's trace
(examples/pipeline.c: a 5-stage RV32I pipeline, 10,000 cycles, a committed_insns counter)."""
import subprocess
import unittest

import uscope
from uscope import trace as trace_module

from .support import TempDirTest, need_env


class CpuAnalysis(TempDirTest):
    def setUp(self):
        super().setUp()
        self.file = self.path("pipeline.uscope")
        subprocess.run([need_env("USCOPE_EXAMPLE_PIPELINE"), self.file], check=True, capture_output=True)
        self.t = uscope.Trace(self.file)
        self.addCleanup(self.t.close)

    def test_cpu_info(self):
        c = self.t.cpu()
        self.assertIs(c, self.t.cpu())  # the default analysis is made once
        self.assertEqual(c.stages, ["fetch", "decode", "execute", "memory", "writeback"])
        self.assertEqual(c.counter_names, ["committed_insns"])
        self.assertEqual(c.max_cycle, 9999)
        self.assertEqual(c.period_ps, 1000)
        self.assertEqual(c.scope, "core0")
        with self.assertRaises(uscope.NotFoundError):
            self.t.cpu(scope="nosuch")

    def test_analyze(self):
        r = self.t.analyze()
        self.assertEqual((r["start_cycle"], r["end_cycle"], r["range_cycles"]), (0, 10000, 10000))
        self.assertEqual(r["total"], r["retired"] + r["flushed"] + r["in_flight"])
        self.assertGreater(r["retired"], 5000)
        self.assertAlmostEqual(r["ipc"], r["retired"] / 10000)
        self.assertEqual([c["name"] for c in r["counters"]], ["committed_insns"])
        self.assertEqual(r["counters"][0]["end_value"], r["retired_in_range"])
        self.assertEqual(sorted(s["stage"] for s in r["stages"]), sorted(self.t.cpu().stages))
        self.assertEqual([s["reason"] for s in r["stalls"]], ["load_use"])
        w = self.t.analyze(1000, 2000)
        self.assertEqual(w["range_cycles"], 1000)
        with self.assertRaises(uscope.InvalidArgumentError):
            self.t.analyze(5, 5)  # start < end
        with self.assertRaises(uscope.ArgumentTypeError):
            self.t.analyze("0")

    def test_timeline(self):
        insns = list(self.t.timeline(100, 200))
        self.assertGreater(len(insns), 50)
        for i in insns:
            self.assertLessEqual(i.first_cycle, 200)
            self.assertGreaterEqual(i.last_cycle, 100)
            self.assertIn(i.status, ("retired", "flushed", "in_flight"))
            self.assertTrue(i.disasm)
            self.assertEqual(i.stages[0].stage, "fetch")
        self.assertEqual([i.first_cycle for i in insns], sorted(i.first_cycle for i in insns))
        first = list(self.t.timeline(0, 0))
        self.assertEqual(first[0].pc, 0x80000000)
        self.assertEqual([s.stage for s in first[0].stages], ["fetch", "decode", "execute", "memory", "writeback"])
        # One entity's life over the whole trace: every instruction has that id.
        ent = list(self.t.timeline(entity=first[0].entity_id))
        self.assertGreater(len(ent), 1)
        self.assertTrue(all(i.entity_id == first[0].entity_id for i in ent))
        self.assertEqual(list(self.t.timeline(entity=4000)), [])

    def test_timeline_iterator_after_close(self):
        it = self.t.timeline()
        next(it)
        self.t.close()
        with self.assertRaises(uscope.BadStateError):
            next(it)

    def test_counters_as_lists(self):
        saved = trace_module._np
        trace_module._np = None  # the list path, whether or not numpy is installed
        try:
            cs = self.t.counters(start=0, end=9999)
        finally:
            trace_module._np = saved
        v = cs["committed_insns"]
        self.assertIsInstance(v, list)
        self.assertEqual(len(v), 10000)
        self.assertEqual(v, sorted(v))  # cumulative
        self.assertEqual(v[-1], self.t.analyze()["counters"][0]["end_value"])
        self.assertEqual(self.t.counters("committed_insns", 100, 109)["committed_insns"] if saved is None
                         else list(self.t.counters("committed_insns", 100, 109)["committed_insns"]), v[100:110])
        with self.assertRaises(uscope.NotFoundError) as cm:
            self.t.counters("nosuch")
        self.assertIn("committed_insns", cm.exception.message)  # the message names the known ones
        with self.assertRaises(uscope.InvalidArgumentError):
            self.t.counters(start=10, end=5)

    @unittest.skipIf(trace_module._np is None, "numpy is not installed: the list path is tested above")
    def test_counters_as_numpy_arrays(self):
        np = trace_module._np
        v = self.t.counters(start=0, end=9999)["committed_insns"]
        self.assertIsInstance(v, np.ndarray)
        self.assertEqual(v.dtype, np.uint64)
        self.assertEqual(int(v[-1]), self.t.analyze()["counters"][0]["end_value"])


class ConvertExport(TempDirTest):
    def test_export_formats(self):
        src = self.path("pipeline.uscope")
        subprocess.run([need_env("USCOPE_EXAMPLE_PIPELINE"), src], check=True, capture_output=True)
        s = uscope.export(src, self.path("p.kanata"), "konata")
        self.assertEqual((s["first_cycle"], s["last_cycle"]), (0, 9999))
        self.assertGreater(s["records"], 5000)
        with open(self.path("p.kanata")) as f:
            self.assertTrue(f.readline().startswith("Kanata"))
        s = uscope.export(src, self.path("p.json"), "chrome-json", start=10, end=20, time_unit="cycle")
        self.assertEqual((s["first_cycle"], s["last_cycle"]), (10, 20))
        import json
        with open(self.path("p.json")) as f:
            self.assertIn("traceEvents", json.load(f))
        notes = []
        uscope.export(src, self.path("p.vcd"), "vcd", start=0, end=50, on_issue=lambda line, r: notes.append(r))
        with open(self.path("p.vcd")) as f:
            self.assertIn("$enddefinitions", f.read())

    def test_convert_round_trip(self):
        jsonl = need_env("USCOPE_TEST_JSONL")
        out = self.path("npu.uscope")
        s = uscope.convert(jsonl, out)
        self.assertEqual(s["skipped"], 0)
        self.assertGreater(s["events_out"], 10)
        with uscope.Trace(out) as t:
            self.assertEqual(sum(1 for _ in t.events()), s["events_out"])
            self.assertIn("npu", [sc.protocol for sc in t.info.scopes])
        back = self.path("back.jsonl")
        s2 = uscope.convert(out, back)
        self.assertEqual(s2["events_out"], s["events_out"])
        pccx = self.path("npu.pccx")
        uscope.convert(back, pccx, dst_format="pccx")
        self.assertIn("TE utilization", uscope.npu_report(out))
        import json
        self.assertIsInstance(json.loads(uscope.npu_report(pccx, json=True)), dict)

    def test_convert_issues_reach_the_callback(self):
        bad = self.path("bad.jsonl")
        with open(need_env("USCOPE_TEST_JSONL")) as f:
            lines = f.read().splitlines()
        lines.insert(3, '{"event_type": "CMD_START"}')  # no t_cycle
        with open(bad, "w") as f:
            f.write("\n".join(lines) + "\n")
        issues = []
        s = uscope.convert(bad, self.path("o.uscope"), on_issue=lambda line, reason: issues.append((line, reason)))
        self.assertEqual(s["skipped"], 1)
        self.assertEqual(issues[0][0], 4)
        with self.assertRaises(uscope.CorruptError):
            uscope.convert(bad, self.path("o2.uscope"), strict=True)

        def boom(line, reason):
            raise RuntimeError("from the callback")
        with self.assertRaises(RuntimeError):
            uscope.convert(bad, self.path("o3.uscope"), on_issue=boom)
