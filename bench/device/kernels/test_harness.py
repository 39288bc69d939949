#!/usr/bin/env python3
"""Tests of the GPU harness's host-side parts, runnable without a GPU:
    .venv/bin/python bench/device/kernels/test_harness.py
the input draw by producer, the --profile selection, and ncu_table.py on a raw CSV written by hand
in the layout `ncu --import REPORT --page raw --csv --print-units base` prints (header row, units
row, one row per launch; ==PROF== lines around it)."""

import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import ncu_table  # noqa: E402
import verify_kernels  # noqa: E402


def spec(name, dtype="float32", sizes=(4, 8), producer="placeholder"):
    sizes = list(sizes)
    strides = [1] * len(sizes)
    for d in range(len(sizes) - 2, -1, -1):
        strides[d] = strides[d + 1] * sizes[d + 1]
    return {"name": name, "dtype": dtype, "sizes": sizes, "strides": strides, "producer": producer}


def kernel(name, inputs, outputs, fx, nbytes=1024):
    return {"name": name, "launch": name.replace("lathe_", "lathe_launch_"), "inputs": inputs, "outputs": outputs,
            "fx": fx, "bytes": nbytes}


# The router softmax normalisation of mixtral (g20_sum_4): its input is the output of `exp`.
NORMALISE = kernel(
    "lathe_g20_sum_4",
    [spec("exp_2", sizes=(2048, 8), producer="aten.exp.default")],
    [spec("div_4", sizes=(2048, 8), producer="")],
    [
        "sum_4 = torch.ops.aten.sum.dim_IntList(exp_2, [-1], True)",
        "div_4 = torch.ops.aten.div.Tensor(exp_2, sum_4)",
    ],
)


class InputDraws(unittest.TestCase):
    def test_inputs_of_never_negative_producers_are_drawn_positive(self):
        mixed = kernel(
            "lathe_g1_mul",
            [spec("exp_1", producer="aten.exp.default"), spec("mm_3", producer="aten.mm.default"),
             spec("rsqrt", producer="aten.rsqrt.default"), spec("primals_1")],
            [spec("mul")],
            ["mul = torch.ops.aten.mul.Tensor(exp_1, mm_3)"],
        )
        self.assertEqual(verify_kernels.positive_inputs(mixed, False), [True, False, True, False])
        self.assertEqual(verify_kernels.positive_inputs(mixed, True), [True, True, True, True])
        self.assertEqual(
            verify_kernels.describe_draw(mixed, False),
            "normal(0, 1); uniform(0.5, 1.5) for exp_1 (aten.exp.default), rsqrt (aten.rsqrt.default)",
        )
        self.assertTrue(verify_kernels.describe_draw(mixed, True).startswith("uniform(0.5, 1.5)"))
        # a manifest from before the field: every input normal
        old = kernel("lathe_g2_add", [{k: v for k, v in spec("x").items() if k != "producer"}], [spec("y")], [])
        self.assertEqual(verify_kernels.positive_inputs(old, False), [False])
        self.assertEqual(verify_kernels.describe_draw(old, False), "normal(0, 1)")

    def test_positive_draw_keeps_a_softmax_normalisation_well_conditioned(self):
        """exp / sum(exp) over 8 values: signed draws let the sum near zero, and float32 eager
        then strays far from the float64 reference; the producer's positive draw does not."""
        fn = verify_kernels.make_function(NORMALISE, torch, {})

        def eager_error(positive):
            generator = torch.Generator().manual_seed(20)
            x = verify_kernels.draw_input(NORMALISE["inputs"][0], torch, "cpu", (1, None), positive, generator)
            if positive:
                self.assertTrue(bool((x >= 0.5).all()) and bool((x <= 1.5).all()))
            with verify_kernels.reference_mode(torch, "cpu"):
                (reference,) = fn(x.double())
            (eager,) = fn(x)
            return verify_kernels.compare(eager, reference, torch, 1e-4)["rel_err"]

        positive = verify_kernels.positive_inputs(NORMALISE, False)
        self.assertEqual(positive, [True])
        self.assertLess(eager_error(True), 1e-6)
        self.assertGreater(eager_error(False), 100 * eager_error(True))


def manifests():
    pointwise = kernel("lathe_g3_le", [spec("iota")], [spec("le")], [])
    return {
        "gpt2_train": {"kernels": [pointwise, kernel("lathe_g5_mul_8", [spec("a")], [spec("b")], [])]},
        "llama3_8b_2l_train": {"kernels": [pointwise, NORMALISE]},
        "softmax_bf16_8192x8192": {
            "kernels": [kernel("lathe_g0_softmax", [spec("x", "bfloat16", (8192, 8192))],
                               [spec("softmax", "bfloat16", (8192, 8192))], [], 1 << 28)]
        },
    }


class Signatures(unittest.TestCase):
    def kernel(self, op, value):
        spec = {"name": "x", "dtype": "bfloat16", "sizes": [4, 8], "strides": [8, 1]}
        return {"inputs": [spec], "outputs": [dict(spec, name=value)],
                "fx": [f"{value} = torch.ops.aten.{op}.int(x, -1)"]}

    def test_renamed_values_match_and_another_op_does_not(self):
        # A value named like its op ("softmax = ...softmax.int") renames the value only.
        softmax = verify_kernels.canonical_signature(self.kernel("softmax", "softmax"))
        renamed = verify_kernels.canonical_signature(self.kernel("softmax", "softmax_3"))
        log_softmax = verify_kernels.canonical_signature(self.kernel("log_softmax", "log_softmax"))
        self.assertEqual(softmax, renamed)
        self.assertNotEqual(softmax, log_softmax)


class DeviceArguments(unittest.TestCase):
    def test_a_program_captured_on_another_device_runs_on_the_runs_device(self):
        # torch.export on the CPU writes device = torch.device(type='cpu') into the FX lines.
        spec = {"name": "x", "dtype": "float32", "sizes": [4], "strides": [1]}
        kernel = {"name": "lathe_g1_arange", "launch": "lathe_launch_g1", "inputs": [spec],
                  "outputs": [dict(spec, name="add")],
                  "fx": ["arange = torch.ops.aten.arange.default(4, device = torch.device(type='cuda', index=0), "
                         "pin_memory = False)",
                         "add = torch.ops.aten.add.Tensor(x, arange)"]}
        fn = verify_kernels.make_function(kernel, torch, {})
        (result,) = fn(torch.ones(4))
        self.assertEqual(result.tolist(), [1.0, 2.0, 3.0, 4.0])


class ProfileSelection(unittest.TestCase):
    def test_names_pick_kernels_in_order_without_repeats(self):
        picked = verify_kernels.select_kernels(
            manifests(), ["lathe_g3_le", "softmax_bf16_8192x8192", "llama3_8b_2l_train/lathe_g3_le", " "]
        )
        self.assertEqual(picked, [("gpt2_train", 0), ("llama3_8b_2l_train", 0), ("softmax_bf16_8192x8192", 0)])
        self.assertEqual(
            verify_kernels.select_kernels(manifests(), ["gpt2_train/lathe_g5_mul_8"]), [("gpt2_train", 1)]
        )

    def test_a_name_that_picks_nothing_is_an_error(self):
        with self.assertRaisesRegex(ValueError, "lathe_g99_x, gpt2_train/lathe_g20_sum_4"):
            verify_kernels.select_kernels(manifests(), ["lathe_g3_le", "lathe_g99_x", "gpt2_train/lathe_g20_sum_4"])
        with self.assertRaisesRegex(ValueError, "no kernel named at all"):
            verify_kernels.select_kernels(manifests(), ["", " "])

    def test_sequence_names_the_kernels_and_their_main_tensor(self):
        m = manifests()
        sequence = verify_kernels.profile_sequence(m, [("softmax_bf16_8192x8192", 0), ("llama3_8b_2l_train", 1)], torch)
        self.assertEqual([e["id"] for e in sequence],
                         ["softmax_bf16_8192x8192/lathe_g0_softmax", "llama3_8b_2l_train/lathe_g20_sum_4"])
        self.assertEqual(sequence[0]["shape"], [8192, 8192])
        self.assertEqual(sequence[0]["dtype"], "bfloat16")
        self.assertEqual(sequence[0]["bytes"], 1 << 28)


# ncu's raw page for a --profile run over three kernels, two with the same lathe kernel name (two
# bundles), with vector + scalar lathe kernels and two triton kernels for one of them. Units as
# --print-units base prints them, one column in usecond to check the conversion.
STALL_COLUMNS = [ncu_table.stall_metric(r) for r in ("long_scoreboard", "barrier", "wait", "not_selected")]
HEADER = [
    "ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size", "Grid Size",
    "Device", "CC", ncu_table.DRAM_READ, ncu_table.DRAM_WRITE, ncu_table.DRAM_PCT, ncu_table.DURATION,
    ncu_table.LOAD_REQUESTS, ncu_table.LOAD_SECTORS, ncu_table.STORE_REQUESTS, ncu_table.STORE_SECTORS,
    ncu_table.BLOCK, ncu_table.GRID, ncu_table.REGISTERS, ncu_table.THEORETICAL_OCCUPANCY, ncu_table.OCCUPANCY,
    *STALL_COLUMNS,
]
UNITS = ["", "", "", "", "", "", "", "", "", "", "", "byte", "byte", "%", "usecond", "", "sector", "", "sector",
         "", "", "register/thread", "%", "%", "", "", "", ""]


def launch_row(launch_id, name, read, written, pct, us, ld, st, block, grid, regs, stalls):
    ld_req, ld_sect = ld
    st_req, st_sect = st
    return [str(launch_id), "4242", "python3", "host", name, "1", "7", f"({block}, 1, 1)", f"({grid}, 1, 1)", "0",
            "9.0", f"{read:,}", f"{written:,}", str(pct), str(us), f"{ld_req:,}", f"{ld_sect:,}", f"{st_req:,}",
            f"{st_sect:,}", str(block), f"{grid:,}", str(regs), "100", "87.5", *map(str, stalls)]


def raw_csv():
    quote = lambda row: ",".join(f'"{c}"' for c in row)  # noqa: E731
    rows = [
        launch_row(0, "lathe_g0_softmax_vec(const __nv_bfloat16 *, __nv_bfloat16 *)", 134_217_728, 134_217_728,
                   60.5, 100.0, (1_000, 16_000), (1_000, 8_000), 512, 8192, 40, (9.5, 2.0, 1.0, 0.5)),
        launch_row(1, "triton_red_fused__softmax_mul_0", 134_217_728, 134_217_728, 40.0, 150.0,
                   (2_000, 8_000), (1_000, 4_000), 256, 8192, 32, (5.0, 0.0, 3.0, 1.0)),
        launch_row(2, "lathe_g3_le", 0, 3_000_000, 10.0, 6.0, (0, 0), (100, 200), 256, 4096, 16,
                   (1.0, 0.0, 2.0, 0.5)),
        launch_row(3, "triton_poi_fused_le_0", 0, 1_000_000, 20.0, 2.0, (0, 0), (100, 400), 128, 1024, 18,
                   (0.5, 0.0, 1.0, 0.1)),
        launch_row(4, "triton_poi_fused_le_1", 0, 1_000_000, 30.0, 1.0, (0, 0), (100, 400), 128, 1024, 18,
                   (0.5, 0.0, 1.0, 0.1)),
        launch_row(5, "lathe_g3_le", 0, 12_000_000, 50.0, 20.0, (0, 0), (100, 200), 256, 16384, 16,
                   (1.0, 0.0, 2.0, 0.5)),
        launch_row(6, "lathe_g3_le_tail", 0, 1_000, 1.0, 1.0, (0, 0), (1, 1), 32, 1, 16, (0, 0, 0, 0)),
        launch_row(7, "triton_poi_fused_le_0", 0, 12_000_000, 60.0, 10.0, (0, 0), (100, 400), 128, 4096, 18,
                   (0.5, 0.0, 1.0, 0.1)),
        launch_row(8, "lathe_g99_stray", 0, 0, 0.0, 1.0, (0, 0), (0, 0), 32, 1, 16, (0, 0, 0, 0)),
    ]
    return "\n".join(
        ["==PROF== Connected to process 4242 (/usr/bin/python3.12)", "profile softmax_bf16_8192x8192/lathe_g0_softmax",
         quote(HEADER), quote(UNITS), *map(quote, rows), "==PROF== Disconnected from process 4242"]
    ) + "\n"


SEQUENCE = [
    {"id": "softmax_bf16_8192x8192/lathe_g0_softmax", "bundle": "softmax_bf16_8192x8192",
     "kernel": "lathe_g0_softmax", "bytes": 268_435_456, "dtype": "bfloat16", "shape": [8192, 8192]},
    {"id": "gpt2_train/lathe_g3_le", "bundle": "gpt2_train", "kernel": "lathe_g3_le", "bytes": 3_000_000,
     "dtype": "bfloat16", "shape": [1, 1, 1024, 1024]},
    {"id": "llama3_8b_2l_train/lathe_g3_le", "bundle": "llama3_8b_2l_train", "kernel": "lathe_g3_le",
     "bytes": 12_000_000, "dtype": "bfloat16", "shape": [1, 1, 2048, 2048]},
]


class NcuTable(unittest.TestCase):
    def test_reads_launches_in_base_units(self):
        launches = ncu_table.read_raw_csv(raw_csv())
        self.assertEqual([k["id"] for k in launches], list(range(9)))
        first = launches[0]
        self.assertEqual(first["name"], "lathe_g0_softmax_vec")
        self.assertAlmostEqual(first["metrics"][ncu_table.DURATION], 100e-6)
        self.assertEqual(first["metrics"][ncu_table.DRAM_READ], 134_217_728)
        self.assertEqual(first["metrics"][ncu_table.GRID], 8192)
        self.assertEqual(first["metrics"][ncu_table.REGISTERS], 40)
        self.assertNotIn("Block Size", first["metrics"])
        self.assertEqual(ncu_table.scale("Mbyte"), 1e6)
        self.assertEqual(ncu_table.scale("nsecond"), 1e-9)
        self.assertEqual(ncu_table.scale("ns"), 1e-9)  # what ncu 2025.3 wrote on the H200 with --print-units base
        self.assertEqual(ncu_table.scale("%"), 1.0)
        with self.assertRaises(ValueError):
            ncu_table.read_raw_csv("==PROF== nothing profiled\n")

    def test_assigns_each_entry_its_lathe_and_triton_kernels(self):
        sides, unassigned = ncu_table.assign(ncu_table.read_raw_csv(raw_csv()), SEQUENCE)
        names = [([k["name"] for k in s["lathe"]], [k["name"] for k in s["triton"]]) for s in sides]
        self.assertEqual(names, [
            (["lathe_g0_softmax_vec"], ["triton_red_fused__softmax_mul_0"]),
            (["lathe_g3_le"], ["triton_poi_fused_le_0", "triton_poi_fused_le_1"]),
            (["lathe_g3_le", "lathe_g3_le_tail"], ["triton_poi_fused_le_0"]),
        ])
        self.assertEqual([k["name"] for k in unassigned], ["lathe_g99_stray"])

    def test_a_side_sums_time_and_bytes_and_takes_the_rest_from_its_longest_kernel(self):
        sides, _ = ncu_table.assign(ncu_table.read_raw_csv(raw_csv()), SEQUENCE)
        triton = ncu_table.summarize(sides[1]["triton"])
        self.assertAlmostEqual(triton["seconds"], 3e-6)
        self.assertEqual(triton["bytes_written"], 2_000_000)
        self.assertAlmostEqual(triton["dram_pct"], (20.0 * 2 + 30.0 * 1) / 3)
        self.assertEqual(triton["longest"], "triton_poi_fused_le_0")
        self.assertEqual(triton["store_sectors_per_request"], 4.0)
        self.assertIsNone(triton["load_sectors_per_request"])  # no global loads
        lathe = ncu_table.summarize(sides[0]["lathe"])
        self.assertEqual(lathe["load_sectors_per_request"], 16.0)
        self.assertEqual([r for r, _ in lathe["top_stalls"]], ["long_scoreboard", "barrier", "wait"])
        self.assertIsNone(ncu_table.summarize([]))

    def test_table_puts_lathe_and_triton_side_by_side(self):
        sides, _ = ncu_table.assign(ncu_table.read_raw_csv(raw_csv()), SEQUENCE)
        text, markdown = ncu_table.table(SEQUENCE, sides)
        lines = text.splitlines()
        self.assertEqual(len(lines), 4)
        softmax = lines[1]
        for cell in ("softmax_bf16_8192x8192/lathe_g0_softmax",
                     "lathe_g0_softmax_vec / triton_red_fused__softmax_mul_0",
                     "100.0 / 150.0", "1.50x", "2684 / 1790", "60 / 40", "134.2 / 134.2", "88 (100) / 88 (100)",
                     "40 / 32", "8192 x 512 / 8192 x 256", "16.0 / 4.0", "8.0 / 4.0",
                     "long_scoreboard 9.5, barrier 2.0, wait 1.0", "long_scoreboard 5.0, wait 3.0, not_selected 1.0"):
            self.assertIn(cell, softmax)
        self.assertIn("lathe_g3_le +1 / triton_poi_fused_le_0", lines[3])
        self.assertIn("21.0 / 10.0", lines[3])
        self.assertEqual(markdown.count("\n"), 4)

    def test_command_line_writes_the_table_and_names_what_is_missing(self):
        with tempfile.TemporaryDirectory() as work:
            work = Path(work)
            (work / "raw.csv").write_text(raw_csv())
            sequence = SEQUENCE + [{"id": "gpt2_train/lathe_g5_mul_8", "kernel": "lathe_g5_mul_8", "bytes": 1}]
            (work / "sequence.json").write_text(json.dumps(sequence))
            run = subprocess.run(
                [sys.executable, str(HERE / "ncu_table.py"), str(work / "raw.csv"), str(work / "sequence.json"),
                 "--out", str(work / "out")],
                capture_output=True, text=True,
            )
            self.assertEqual(run.returncode, 1, run.stderr)  # one entry without a lathe kernel
            self.assertIn("no lathe kernel profiled for gpt2_train/lathe_g5_mul_8", run.stdout)
            self.assertIn("1 profiled kernels fit no entry: lathe_g99_stray", run.stdout)
            report = json.loads((work / "out" / "profile.json").read_text())
            self.assertEqual(len(report["kernels"]), 4)
            self.assertEqual((work / "out" / "profile.txt").read_text().strip(), run.stdout.strip())


if __name__ == "__main__":
    unittest.main()
