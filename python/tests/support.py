"""Shared by the tests: a scratch directory, a small trace of known content, the inputs the
ctest environment provides (a missing one fails the test, it does not skip it)."""
import os
import shutil
import tempfile
import unittest

import uscope


def need_env(name):
    value = os.environ.get(name)
    if not value:
        raise AssertionError("%s is not set: run these tests through ctest (python/CMakeLists.txt)" % name)
    if not os.path.exists(value):
        raise AssertionError("%s=%s does not exist" % (name, value))
    return value


class TempDirTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="uscope_py_")
        self.addCleanup(shutil.rmtree, self.dir, True)

    def path(self, name):
        return os.path.join(self.dir, name)


# The small trace: 1 ns clock, a sparse 4-slot "rob" (pc u64, op enum, delta i16) with a
# head property, a dense 1-slot "counter" (u64), events "retire" (id u32, ok bool) and "note"
# (text string_ref). Cycle c (0..99): slot c % 4 gets pc 0x1000 + 4c, op c % 3, delta -c;
# every third cycle clears slot (c + 2) % 4; the counter adds 1; "retire" (c, c even) each
# cycle, "note" at cycle 50.
CYCLES = 100


def write_small(path, **writer_opts):
    s = uscope.Schema()
    s.add_clock("clk", 1000)
    top = s.add_scope("top")
    core = s.add_scope("core0", parent=top, protocol="custom")
    ops = s.add_enum("op", ["add", "load", "store"])
    rob = s.add_storage("rob", [("pc", "u64"), ("op", "enum", ops), ("delta", "i16")], num_slots=4,
                        scope=core, sparse=True, buffer=True, properties=[("head", "u16")])
    cnt = s.add_storage("counter", [("value", "u64")], scope=core)
    retire = s.add_event("retire", [("id", "u32"), ("ok", "bool")], scope=core)
    note = s.add_event("note", [("text", "string_ref")], scope=core)
    s.add_dut_property("dut.name", "small")
    with uscope.Writer(path, s, dut={"run": "unit"}, checkpoint_interval_ps=20_000, **writer_opts) as w:
        for c in range(CYCLES):
            w.begin_cycle(c * 1000)
            w.slot_set(rob, c % 4, 0, 0x1000 + 4 * c)
            w.slot_set(rob, c % 4, 1, c % 3)
            w.slot_set(rob, c % 4, 2, -c)
            w.prop_set(rob, 0, c % 4)
            if c % 3 == 0:
                w.slot_clear(rob, (c + 2) % 4)
            w.slot_add(cnt, 0, 0, 1)
            w.event(retire, c, c % 2 == 0)
            if c == 50:
                w.event(note, w.string("halfway"))
            w.end_cycle()
    return {"rob": rob, "counter": cnt, "retire": retire, "note": note}
