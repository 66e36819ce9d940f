#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of the lab's console judge (each kind of report it must catch,
and the lines it must not mistake for one), its wire check, and the failover
benchmark's plot data."""

import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import lab  # noqa: E402


def console(*body, done=True):
    lines = ["[    0.000000] Linux version 6.12", "LAB-BOOTED vm=0 uptime=3.0"]
    lines += list(body)
    if done:
        lines.append("LAB-DONE vm=0")
    return "\n".join(lines) + "\n"


def run(scenarios, *body, done=True, timed_out=False):
    return lab.judge(scenarios, [console(*body, done=done)], timed_out)


class Judge(unittest.TestCase):
    def test_clean_pass(self):
        v = run(["a"], "LAB-BEGIN a", "lab: fine", "LAB-END a rc=0")
        self.assertEqual(v, {"a": []})

    def test_nonzero_exit(self):
        v = run(["a"], "LAB-BEGIN a", "LAB-END a rc=1")
        self.assertTrue(v["a"])

    def test_each_kernel_report_fails_the_running_scenario(self):
        reports = [
            "[   12.345678] BUG: KASAN: slab-use-after-free in lnet_foo+0x1/0x2",
            "[   12.345678] WARNING: CPU: 0 PID: 1 at lnet/x.rs:1 foo",
            "[   12.345678] WARNING: possible circular locking dependency detected",
            "[   12.345678] BUG: sleeping function called from invalid context at mm/slub.c:1",
            "[   12.345678] kmemleak: 2 new suspected memory leaks (see /sys/kernel/debug/kmemleak)",
            "[   12.345678] Kernel panic - not syncing: Attempted to kill init!",
            "[   12.345678] rust_kernel: panicked at lnet/x.rs:3:5:",
            "[   12.345678] Oops: general protection fault, probably for non-canonical address",
            "[   12.345678] WARNING: suspicious RCU usage",
            "[   12.345678] lnet_ulp: FAIL an operation never ended: module pinned, memory kept",
            "[   12.345678] ksocklnd: LND dropped an LNet message: finalized with -EIO",
        ]
        for r in reports:
            v = run(["a", "b"], "LAB-BEGIN a", "LAB-END a rc=0", "LAB-BEGIN b", r, "LAB-END b rc=0")
            self.assertEqual(v["a"], [], r)
            self.assertTrue(v["b"], r)

    LUSTRE_REPORT = [
        "[   29.241016] WARNING: possible recursive locking detected",
        "[   29.242437] ffff88800c8443f0 (sb_writers#6){.+.+}-{0:0}, at: kernel_write+0xb3/0x180",
        "[   29.252211] Call Trace:",
        "[   29.252950]  osd_write+0x3ea/0x6f0 [osd_wbcfs]",
        "[   29.253918]  local_oid_storage_init+0x1902/0x2350 [obdclass]",
        "[   29.263314]  </TASK>",
    ]

    def test_lustre_own_report_is_a_note(self):
        notes = []
        v = lab.judge(["a"], [console("LAB-BEGIN a", *self.LUSTRE_REPORT, "LAB-END a rc=0")], False, notes)
        self.assertEqual(v, {"a": []})
        self.assertEqual(len(notes), 1)
        self.assertIn("lockdep is off on vm0 from 29.241016 s", notes[0])

    def test_lustre_report_through_lnet_fails(self):
        body = self.LUSTRE_REPORT[:4] + ["[   29.253000]  lnet_md_unlink+0x12/0x40 [lnet]"] + self.LUSTRE_REPORT[4:]
        v = run(["a"], "LAB-BEGIN a", *body, "LAB-END a rc=0")
        self.assertTrue(v["a"])

    def test_report_after_a_lustre_one_fails(self):
        v = run(["a"], "LAB-BEGIN a", *self.LUSTRE_REPORT,
                "[   30.000000] BUG: KASAN: slab-use-after-free in lnet_foo+0x1/0x2", "LAB-END a rc=0")
        self.assertEqual(len(v["a"]), 1)

    PTLRPC_LEAK = [
        "unreferenced object 0xffff88807d138a80 (size 64):",
        '  comm "modprobe", pid 152, jiffies 4294910507',
        "  backtrace (crc 71b8e6da):",
        "    __kmalloc_cache_noprof+0x143/0x2b0",
        "    percpu_ref_init+0xa7/0x2c0",
        "    0xffffffffa05d39dc",
        "    0xffffffffa02502ef",
        "    do_one_initcall+0x1ac/0x390",
        "    do_init_module+0x1f6/0x4e0",
    ]

    def test_lustre_own_leak_is_a_note(self):
        notes = []
        v = lab.judge(["a"], [console("LAB-BEGIN a", "LAB-LEAK after rmmod lnet:", *self.PTLRPC_LEAK,
                                      "LAB-END a rc=0")], False, notes)
        self.assertEqual(v, {"a": []})
        self.assertEqual(len(notes), 1)

    def test_kernel_count_of_lustre_own_leak_is_excused(self):
        count = "[  211.797117] kmemleak: 1 new suspected memory leaks (see /sys/kernel/debug/kmemleak)"
        notes = []
        v = lab.judge(["a"], [console("LAB-BEGIN a", count, "LAB-LEAK after rmmod lnet:", *self.PTLRPC_LEAK,
                                      "LAB-END a rc=0")], False, notes)
        self.assertEqual(v, {"a": []})
        self.assertEqual(len(notes), 1)
        # Two new leaks counted, one of them shown as Lustre's: not excused.
        v = run(["a"], "LAB-BEGIN a", count.replace(": 1 new", ": 2 new"), "LAB-LEAK after rmmod lnet:",
                *self.PTLRPC_LEAK, "LAB-END a rc=0")
        self.assertTrue(v["a"])
        # A count with no report after it stays a failure.
        v = run(["a"], "LAB-BEGIN a", count, "LAB-END a rc=0")
        self.assertTrue(v["a"])

    def test_lustre_ko2iblnd_sleep_in_atomic_is_a_note(self):
        report = [
            "[  135.246848] BUG: sleeping function called from invalid context at kernel/locking/mutex.c:586",
            "[  135.256524] Call Trace:",
            "[  135.256627]  <TASK>",
            "[  135.258273]  lnet_get_link_status+0xe/0x30 [lnet]",
            "[  135.258730]  kiblnd_startup+0x1558/0x1bf0 [ko2iblnd]",
            "[  135.259050]  lnet_startup_lndnet+0x59c/0x1670 [lnet]",
            "[  135.260000]  </TASK>",
        ]
        notes = []
        v = lab.judge(["a"], [console("LAB-BEGIN a", *report, "LAB-END a rc=0")], False, notes)
        self.assertEqual(v, {"a": []})
        self.assertEqual(len(notes), 1)
        # The same report from our ko2iblnd's startup fails.
        ours = [r.replace("kiblnd_startup", "o2iblnd_startup") for r in report]
        self.assertTrue(run(["a"], "LAB-BEGIN a", *ours, "LAB-END a rc=0")["a"])

    def test_lustre_discovery_nested_lp_lock_is_a_note(self):
        report = [
            "[   78.205157] WARNING: possible recursive locking detected",
            "[   78.207388] ffff88803dd03d50 (&lp->lp_lock){+.+.}-{2:2}, at: lnet_peer_discovery+0x197b/0x4580 [lnet]",
            "[   78.218664] Call Trace:",
            "[   78.218815]  <TASK>",
            "[   78.282478]  lnet_peer_discovery+0x197b/0x4580 [lnet]",
            "[   78.221145]  kthread+0x247/0x2a0",
            "[   78.222278]  </TASK>",
        ]
        notes = []
        v = lab.judge(["a"], [console("LAB-BEGIN a", *report, "LAB-END a rc=0")], False, notes)
        self.assertEqual(v, {"a": []})
        self.assertEqual(len(notes), 1)
        # A recursive lock in a function of ours fails.
        ours = [r.replace("lnet_peer_discovery", "_RNvNtCs1_4lnet9discovery3run") for r in report]
        self.assertTrue(run(["a"], "LAB-BEGIN a", *ours, "LAB-END a rc=0")["a"])

    def test_idle_scan_fails_the_scenarios_it_names(self):
        count = "[  211.797117] kmemleak: 1 new suspected memory leaks (see /sys/kernel/debug/kmemleak)"
        leak = ["unreferenced object 0xffff888003a1c000 (size 64):", "  backtrace (crc 0):",
                "    lnet_foo+0x1/0x2 [lnet]"]
        # The scan after a ran during b: a fails, b does not.
        v = run(["a", "b"], "LAB-BEGIN a", "LAB-END a rc=0", "LAB-BEGIN b", count,
                "LAB-LEAK after scenarios a:", *leak, "LAB-END b rc=0")
        self.assertTrue(v["a"])
        self.assertEqual(v["b"], [])
        # One scan after two scenarios: both fail.
        v = run(["a", "b", "c"], "LAB-BEGIN a", "LAB-END a rc=0", "LAB-BEGIN b", "LAB-END b rc=0",
                "LAB-BEGIN c", count, "LAB-LEAK after scenarios a b:", *leak, "LAB-END c rc=0")
        self.assertTrue(v["a"] and v["b"])
        self.assertEqual(v["c"], [])
        # Its count alone, with no report, still fails where it is.
        v = run(["a", "b"], "LAB-BEGIN a", "LAB-END a rc=0", "LAB-BEGIN b", count, "LAB-END b rc=0")
        self.assertTrue(v["b"])

    def test_transient_leak_is_a_note(self):
        count = "[  211.797117] kmemleak: 1 new suspected memory leaks (see /sys/kernel/debug/kmemleak)"
        first = ["~ unreferenced object 0xffff888005faa800 (size 512):", "~   backtrace (crc 6e9ca3b6):",
                 "~     kmemleak_alloc+0x23/0x30", "~     __ipv6_dev_mc_inc+0x2e4/0x910"]
        notes = []
        v = lab.judge(["a", "b"], [console("LAB-BEGIN a", "LAB-END a rc=0", "LAB-BEGIN b", count,
                                           "LAB-LEAK-TRANSIENT after scenarios a: 1 object(s) a second scan "
                                           "found referenced:", *first, "LAB-END b rc=0")], False, notes)
        self.assertEqual(v, {"a": [], "b": []})
        self.assertEqual(len(notes), 1)
        self.assertIn("__ipv6_dev_mc_inc", notes[0])
        # Confirmed by the second scan, it fails the scenario it names.
        v = run(["a", "b"], "LAB-BEGIN a", "LAB-END a rc=0", "LAB-BEGIN b", count,
                "LAB-LEAK after scenarios a:", *[x[2:] for x in first], "LAB-END b rc=0")
        self.assertTrue(v["a"])
        # After a foreground scan too.
        v = run(["a"], "LAB-BEGIN a", count, "LAB-LEAK-TRANSIENT after the last scenario: 1 object(s)",
                *first, "LAB-END a rc=0")
        self.assertEqual(v["a"], [])

    def test_a_leak_beside_lustre_own_fails(self):
        other = ["unreferenced object 0xffff88807d138b00 (size 128):", "  backtrace (crc 1):",
                 "    __kmalloc_noprof+0x1/0x2", "    lnet_peer_alloc+0x1/0x2 [lnet]"]
        v = run(["a"], "LAB-BEGIN a", "LAB-LEAK after rmmod lnet:", *self.PTLRPC_LEAK, *other,
                "LAB-END a rc=0")
        self.assertTrue(v["a"])
        # A percpu_ref of a module still loaded names its caller: not Lustre's by this rule.
        named = [l.replace("0xffffffffa05d39dc", "lnet_foo+0x1/0x2 [lnet]") for l in self.PTLRPC_LEAK]
        v = run(["a"], "LAB-BEGIN a", "LAB-LEAK after rmmod lnet:", *named, "LAB-END a rc=0")
        self.assertTrue(v["a"])

    def test_leak_and_fail_markers(self):
        for m in ("LAB-LEAK after rmmod lnet:", "LAB-FAIL: module lnet will not unload"):
            v = run(["a"], "LAB-BEGIN a", m, "LAB-END a rc=0")
            self.assertTrue(v["a"], m)

    def test_leak_report_comes_with_the_verdict(self):
        v = run(["a", "b"], "LAB-BEGIN a", "LAB-LEAK after rmmod ko2iblnd:",
                "unreferenced object 0xffff888 (size 64):", "  backtrace (crc 0):",
                "    kmalloc_trace+0x1/0x2", "LAB-END a rc=0", "LAB-BEGIN b", "LAB-END b rc=0")
        text = "\n".join(v["a"])
        self.assertIn("unreferenced object", text)
        self.assertIn("kmalloc_trace", text)
        self.assertEqual(v["b"], [])

    def test_report_after_the_last_scenario_fails_it(self):
        v = run(["a"], "LAB-BEGIN a", "LAB-END a rc=0", "LAB-LEAK after the last scenario:")
        self.assertTrue(v["a"])

    def test_unfinished_and_timed_out(self):
        v = run(["a", "b"], "LAB-BEGIN a", "LAB-END a rc=0", "LAB-BEGIN b", done=False, timed_out=True)
        self.assertEqual(v["a"], [])
        self.assertIn("time limit", " ".join(v["b"]))

    def test_vm_that_stops_before_the_end(self):
        v = run(["a"], "LAB-BEGIN a", "LAB-END a rc=0", done=False)
        self.assertTrue(v["a"])

    def test_harmless_lines(self):
        v = run(
            ["a"],
            "[    1.000000] kmemleak: Kernel memory leak detector initialized (mem pool available: 15048)",
            "LAB-BEGIN a",
            "lab: refused as expected: BUG: in user text, WARNING: too",
            "[    5.000000] lnet: Invalid health value. Maximum: 1000 value = 1001",
            "LAB-END a rc=0",
        )
        self.assertEqual(v["a"], [])

    def test_every_vm_must_pass(self):
        ok = console("LAB-BEGIN a", "LAB-END a rc=0")
        bad = console("LAB-BEGIN a", "LAB-END a rc=2")
        v = lab.judge(["a"], [ok, bad], False)
        self.assertEqual(len(v["a"]), 1)
        self.assertIn("vm1", v["a"][0])

    def test_durations_take_the_slowest_vm(self):
        a = console("LAB-BEGIN a", "LAB-END a rc=0 secs=12", "LAB-BEGIN b", "LAB-END b rc=1 secs=3")
        b = console("LAB-BEGIN a", "LAB-END a rc=0 secs=15")
        self.assertEqual(lab.durations([a, b]), {"a": 15, "b": 3})
        v = lab.judge(["a"], [console("LAB-BEGIN a", "LAB-END a rc=0 secs=7")], False)
        self.assertEqual(v["a"], [])

    def test_a_failed_scenario_shows_its_last_lines_up_to_its_failure(self):
        c = console("LAB-BEGIN a", "lab: a ran", "LAB-END a rc=0", "LAB-BEGIN b",
                    *[f"[ 1.0] line {i}" for i in range(40)], "LAB-FAIL: b broke",
                    "lab: clean-up", "LAB-END b rc=1", "LAB-BEGIN c", "LAB-END c rc=0")
        tail = lab.scenario_tail(c, "b")
        self.assertEqual(len(tail), lab.TAIL_LINES)
        self.assertEqual(tail[-1], "LAB-FAIL: b broke")
        self.assertEqual(tail[-2], "[ 1.0] line 39")
        self.assertEqual(lab.scenario_tail(c, "a"), ["lab: a ran"])
        self.assertEqual(lab.scenario_tail(c, "z"), [])

    def test_cpu_shares_per_scenario_and_vm(self):
        a = console("LAB-BEGIN a", "LAB-END a rc=0 secs=12 cpu=user:25,system:70,idle:5")
        b = console("LAB-BEGIN a", "LAB-END a rc=0 secs=12 cpu=user:0,system:1,idle:3")
        self.assertEqual(lab.cpu_shares([a, b]), {"a": ["vm0 25/70/5", "vm1 0/25/75"]})
        self.assertEqual(lab.durations([a]), {"a": 12})

    def test_a_clock_other_than_the_tsc_is_named(self):
        tsc = "LAB-BOOTED vm=0 uptime=1.0 lustre=0 clock=tsc"
        jiffies = "LAB-BOOTED vm=1 uptime=1.2 lustre=0 clock=refined-jiffies"
        self.assertEqual(lab.clock_of(jiffies), "refined-jiffies")
        self.assertEqual(lab.clock_of(console()), None)
        self.assertEqual(lab.clock_problems([tsc, jiffies]),
                         ["vm1: clocksource refined-jiffies, not tsc: timers fire only on ticks"])
        early = "LAB-BOOTED vm=1 uptime=1.2 lustre=0 clock=tsc-early"
        self.assertEqual(lab.clock_problems([tsc, early, console()]), [])


class HubRelay(unittest.TestCase):
    def test_relays_to_every_other_port(self):
        import socket

        socks = []
        for _ in range(3):
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind(("127.0.0.1", 0))
            s.settimeout(2)
            socks.append(s)
        hub = lab.Hub([s.getsockname()[1] for s in socks])
        try:
            socks[0].sendto(b"frame", ("127.0.0.1", hub.port))
            self.assertEqual(socks[1].recv(100), b"frame")
            self.assertEqual(socks[2].recv(100), b"frame")
            socks[0].settimeout(0.3)
            with self.assertRaises(socket.timeout):
                socks[0].recv(100)  # never back to the sender
        finally:
            hub.close()
            for s in socks:
                s.close()



class MixedLab(unittest.TestCase):
    def test_header_and_lustre_vms(self):
        import tempfile

        with tempfile.NamedTemporaryFile("w", suffix=".sh") as f:
            f.write("# lab: vms=3 nics=2 lustre=1 timeout=99\n# text\n")
            f.flush()
            h = lab.parse_header(Path(f.name))
        self.assertEqual((h["vms"], h["nics"], h["lustre"], h["timeout"]), (3, 2, 1, 99))
        boot = lab.Boot(Path("k"), Path("i"), Path("w"), 3, 2, ["a"], 60,
                        lustre=(1, Path("b"), Path("li")))
        self.assertEqual([boot.is_lustre(v) for v in range(3)], [False, False, True])
        plain = lab.Boot(Path("k"), Path("i"), Path("w"), 2, 2, ["a"], 60)
        self.assertFalse(plain.is_lustre(1))
        boot.consoles = [Path("c0"), Path("c1"), Path("c2")]
        boot.hubs = [lab.Hub([1, 2, 3]), lab.Hub([4, 5, 6])]
        try:
            cmd = boot.qemu_cmd(2, [[1, 2, 3], [4, 5, 6]])
            first = boot.qemu_cmd(0, [[1, 2, 3], [4, 5, 6]])
        finally:
            for hub in boot.hubs:
                hub.close()
        self.assertIn("b/bzImage", cmd)
        self.assertIn("li", cmd)
        self.assertIn("lab.lustre=1", " ".join(cmd))
        self.assertIn("lab.lustre=0", " ".join(first))
        self.assertNotIn("b/bzImage", first)
        # Our node's rails are captured for the wire check, the Lustre node's not.
        self.assertIn("filter-dump,id=dump1,netdev=n1,file=w/rail1.pcap", first)
        self.assertNotIn("filter-dump", " ".join(cmd))


class WireCheck(unittest.TestCase):
    PUT_BAD = "|0x000000c1|1||_ws.malformed|Capture:4192 offset:96 (length:0) msg_type:1 ib_type:00"

    def test_marked_alike_passes(self):
        rows = ["10.1.0.1" + self.PUT_BAD, "10.1.0.2" + self.PUT_BAD,
                "10.1.0.1|0x000000c1|0|||", "10.1.0.2|0x000000c1|0,3|||"]
        summary, problems = lab.judge_wire({0: rows})
        self.assertEqual(problems, [])
        self.assertEqual(summary, ["rail0: 2 LNet frames of ours (1 marked), 2 of Lustre's (1 marked)"])

    def test_only_ours_marked_fails(self):
        rows = ["10.2.0.1|0x000000c1|3||_ws.malformed|", "10.2.0.2|0x000000c1|3|||",
                "10.2.0.1" + self.PUT_BAD, "10.2.0.2|0x000000c1|1|||"]
        _, problems = lab.judge_wire({1: rows})
        self.assertEqual(problems, [
            "1 of our 1 PUT frames marked malformed, none of Lustre's 1",
            "1 of our 1 REPLY frames marked malformed, none of Lustre's 1"])

    def test_kinds_compared_across_rails(self):
        # Lustre's own push crossed the other rail, marked alike.
        push = "||1|0xd1||Capture:184 offset:120 (length:184) msg_type:1 ib_type:d1"
        rails = {0: ["10.1.0.1" + push, "10.1.0.2|0x000000c1|0|||"],
                 1: ["10.2.0.2" + push, "10.2.0.1|0x000000c1|0|||"]}
        self.assertEqual(lab.judge_wire(rails)[1], [])
        rails[1][0] = "10.2.0.2|0x000000c1|3|||"
        self.assertEqual(lab.judge_wire(rails)[1],
                         ["1 of our 1 o2ib 0xd1 PUT frames marked malformed, none of Lustre's 0"])

    def test_a_side_missing_fails(self):
        _, problems = lab.judge_wire({0: ["10.1.0.2|0x000000c1|0|||"]})
        self.assertEqual(problems, ["rail0: no LNet frames of ours decoded"])

    def test_kind_names_the_complained_message(self):
        self.assertEqual(lab.frame_kind("0x000000c1,0x000000c1", "0,1", "", "msg_type:0 x"), "ACK")
        self.assertEqual(lab.frame_kind("0x000000c0", "", "", ""), "NOOP")
        self.assertEqual(lab.frame_kind("", "2", "0xd2", ""), "o2ib 0xd2 GET")


sys.path.insert(0, str(Path(__file__).parents[2] / "scripts"))
import bench_report  # noqa: E402
import plot_failover  # noqa: E402


class FailoverPlot(unittest.TestCase):
    def test_series_of_a_cut_become_rates_from_the_cut(self):
        with tempfile.TemporaryDirectory() as d:
            boot = Path(d) / "boot-2vm-2nic"
            boot.mkdir()
            (boot / "console-vm0.log").write_text(
                "lab: bench-rails tcp-silent 1000 0 0\n"
                "lab: bench-series tcp-silent 1000 10 10 1000 1000\n"
                "[   12.0] noise\n"
                "lab: bench-rails tcp-silent 2000 2000000 1000000\n"
                "lab: bench-series tcp-silent 2000 30 20 1000 900\n"
                "lab: bench-cut tcp-silent 1500\n"
                "lab: bench-rails o2ib-silent 1000 1 1\n"
                "lab: bench-rails tcp-silent 3000 x 20\n"
                "lab: bench-rails mptcp-silent 1000 0 0\n"
                "lab: bench-cut mptcp-silent 900\n"
            )
            found = plot_failover.series(Path(d))
        # A series without its cut is left out; a garbled line too; MPTCP
        # has no health.
        self.assertEqual(sorted(found), ["mptcp-silent", "tcp-silent"])
        cut, rails, health = found["tcp-silent"]
        self.assertEqual(cut, 1500)
        self.assertEqual(plot_failover.rows(cut, rails), [(0.5, 2.0, 1.0)])
        self.assertEqual(plot_failover.health_rows(cut, health),
                         [(-0.5, 1000, 1000), (0.5, 1000, 900)])
        self.assertEqual(found["mptcp-silent"][2], [])

    def test_full_load_is_when_rail_0_alone_carries_what_both_did(self):
        data = [(-1.0, 10, 10), (0.0, 10, 10), (0.5, 0, 0), (1.0, 5, 0),
                (1.5, 19, 0), (2.0, 19, 0), (3.0, 18, 0)]
        self.assertEqual(plot_failover.full_load_after(data), 1.5)
        self.assertIsNone(plot_failover.full_load_after(data[:4]))

    def test_stall_is_the_longest_time_both_rails_stood_nearly_still(self):
        data = [(-0.1, 10, 10), (0.0, 10, 10), (0.1, 1, 0), (0.2, 0, 0),
                (0.3, 15, 0), (0.4, 0, 0), (0.5, 20, 0), (0.6, 0, 0), (0.7, 0, 0),
                (0.8, 0, 0)]
        # From the last sample before the cut to the first one back up;
        # the traffic's end is not a stall.
        self.assertAlmostEqual(plot_failover.below(data), 0.2)
        self.assertEqual(plot_failover.below([(0.0, 1, 1), (0.1, 2, 2)]), 0.0)


class BenchReport(unittest.TestCase):
    def test_figures_and_points_are_gathered_from_every_console(self):
        with tempfile.TemporaryDirectory() as d:
            for vm, text in ((0, "lab: bench: one rail, ratio 0.97\n"
                                 "lab: bench-point bandwidth-put LNet 8 19.5\n"
                                 "lab: bench-point bandwidth-put LNet x 1\n"),
                             (1, "lab: bench-point bandwidth-put raw-TCP 8 20\n"
                                 "lab: bench round 1: not a figure\n")):
                boot = Path(d) / "boot-2vm-2nic"
                boot.mkdir(exist_ok=True)
                (boot / f"console-vm{vm}.log").write_text(text)
            figures, plots = bench_report.gather(Path(d))
        self.assertEqual(figures, ["one rail, ratio 0.97"])
        self.assertEqual(plots, {"bandwidth-put": {"LNet": [(8.0, 19.5)], "raw-TCP": [(8.0, 20.0)]}})

    def test_lnet_rs_is_divided_by_lustre_where_both_ran(self):
        plots = {"peers-put": {"lnet-rs": [(1.0, 9.0), (2.0, 12.0)], "Lustre": [(1.0, 10.0)]}}
        self.assertEqual(bench_report.peer_ratios(plots), [
            "lnet-rs / Lustre, PUT of 1 MiB, 8 in flight, over 1 rail(s): 9.00 / 10.00 MB/s = 0.90 (goal >= 1.0)"])


class Scenarios(unittest.TestCase):
    """The smoke check of the benchmarks that CI makes (they run only in
    scripts/bench.sh): every scenario parses, and each bench_* has a lab."""

    def test_every_scenario_parses(self):
        import subprocess
        for path in sorted(lab.TESTS.glob("*.sh")):
            r = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, f"{path.name}: {r.stderr}")

    def test_benchmarks_declare_their_lab(self):
        for path in sorted(lab.TESTS.glob("bench_*.sh")):
            self.assertGreaterEqual(lab.parse_header(path)["vms"], 2, path.name)


if __name__ == "__main__":
    unittest.main()
