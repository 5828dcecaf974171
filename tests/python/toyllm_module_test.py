"""The Python module against the command line: the same engine, so the same numbers.

Run by ctest (tests/CMakeLists.txt) with Debian's /usr/bin/python3, PYTHONPATH at the built
module and TOYLLM_BINARY naming the toyllm command.
"""
import os
import subprocess
import tempfile
import unittest

import numpy as np

import toyllm

BINARY = os.environ["TOYLLM_BINARY"]
MODELS = os.environ.get("TOYLLM_MODELS") or os.path.join(os.environ["TOYLLM_SOURCE_DIR"], "..", "shared", "models")
LLAMA_CPP_GGUF = os.path.join(MODELS, "gguf", "stories260K.llamacpp-f32.gguf")
TIRED = "这个动物并没有过马路，因为它太累了。它指的是"
WIDE = "这个动物并没有过马路，因为它太宽了。它指的是"


def toyllm_cli(*args):
    result = subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        raise AssertionError(f"toyllm {' '.join(args)}: {result.stderr}")
    return result.stdout


class ModelTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.model = toyllm.Model()
        cls.dir = tempfile.TemporaryDirectory()

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def path(self, name):
        return os.path.join(self.dir.name, name)

    def test_cache_equals_the_attention_and_hidden_files_of_the_cli(self):
        ids = self.model.tokenize(TIRED)
        logits, cache = self.model.run_with_cache(ids)
        c = self.model.config
        toyllm_cli("attention", "-p", TIRED, "-o", self.path("maps"))
        attention = np.load(self.path("maps/attention.npy"))
        self.assertEqual(attention.shape, (c["n_layers"], c["n_heads"], len(ids), len(ids)))
        for layer in range(c["n_layers"]):
            np.testing.assert_array_equal(cache[f"blk.{layer}.weights"], attention[layer])
        toyllm_cli("logits", "-p", TIRED, "-o", self.path("logits.npy"), "--hidden", self.path("hidden.npy"))
        hidden = np.load(self.path("hidden.npy"))
        np.testing.assert_array_equal(cache["embed"], hidden[0])
        for layer in range(c["n_layers"]):
            np.testing.assert_array_equal(cache[f"blk.{layer}.resid_post"], hidden[layer + 1])
        np.testing.assert_array_equal(logits, np.load(self.path("logits.npy")))

    def test_cache_holds_every_tap_with_its_shape(self):
        ids = self.model.tokenize(TIRED)
        _, cache = self.model.run_with_cache(ids)
        c, t = self.model.config, len(ids)
        self.assertEqual(cache["embed"].shape, (t, c["dim"]))
        self.assertEqual(cache["blk.0.q"].shape, (t, c["n_heads"] * c["head_dim"]))
        self.assertEqual(cache["blk.1.k"].shape, (t, c["n_kv_heads"] * c["head_dim"]))
        self.assertEqual(cache["blk.2.scores"].shape, (c["n_heads"], t, t))
        self.assertEqual(cache["blk.2.ffn_out"].shape, (t, c["dim"]))
        # Causal: no weight above the diagonal, rows sum to 1, masked scores are -inf.
        weights = cache["blk.2.weights"]
        self.assertTrue(np.all(np.triu(weights, 1) == 0))
        np.testing.assert_allclose(weights.sum(-1), 1, atol=1e-5)
        self.assertTrue(np.isneginf(cache["blk.0.scores"][0, 0, 1]))
        # A copy the caller owns: changing it changes no later run.
        cache["embed"][:] = 0
        _, again = self.model.run_with_cache(ids)
        self.assertTrue(np.any(again["embed"] != 0))

    def test_ablation_equals_the_cli(self):
        ids = self.model.tokenize(TIRED)
        for mode, extra in [("zero", []), ("mean", ["--ablate-ref", WIDE])]:
            toyllm_cli("logits", "-p", TIRED, "-o", self.path("ablated.npy"), "--ablate", "2.0,1.2",
                       "--ablate-mode", mode, *extra)
            ablated = self.model.run(ids, ablate=[(2, 0), (1, 2)], ablate_mode=mode,
                                     ablate_ref=WIDE if extra else None)
            np.testing.assert_array_equal(ablated, np.load(self.path("ablated.npy")), err_msg=mode)
            self.assertGreater(np.abs(ablated - self.model.run(ids)).max(), 1e-3)

    def test_ablated_attention_equals_the_cli(self):
        ids = self.model.tokenize(WIDE)
        toyllm_cli("attention", "-p", WIDE, "-o", self.path("ablated_maps"), "--ablate", "1.2")
        attention = np.load(self.path("ablated_maps/attention.npy"))
        _, cache = self.model.run_with_cache(ids, ablate=[(1, 2)])
        _, intact = self.model.run_with_cache(ids)
        np.testing.assert_array_equal(cache["blk.2.weights"], attention[2])
        # Layer 1's own weights come before its heads' outputs are removed; layer 2's change.
        np.testing.assert_array_equal(cache["blk.1.weights"], intact["blk.1.weights"])
        self.assertGreater(np.abs(cache["blk.2.weights"] - intact["blk.2.weights"]).max(), 1e-3)
        d = self.model.config["head_dim"]
        np.testing.assert_array_equal(cache["blk.1.kqv_out"][:, 2 * d:3 * d], 0)

    def test_generate_equals_the_cli(self):
        for prompt in (TIRED, WIDE):
            expected = toyllm_cli("generate", "-p", prompt, "--temp", "0", "-n", "3")
            self.assertEqual(self.model.generate(prompt, n=3, temp=0) + "\n", expected)
        expected = toyllm_cli("generate", "-p", WIDE, "--temp", "0", "-n", "1", "--ablate", "1.2")
        self.assertEqual(self.model.generate(WIDE, n=1, temp=0, ablate=[(1, 2)]) + "\n", expected)

    def test_a_llama_cpp_gguf_gives_the_cli_numbers(self):
        if not os.path.exists(LLAMA_CPP_GGUF):
            if os.environ.get("TOYLLM_REQUIRE_MODELS") == "1":
                self.fail(f"{LLAMA_CPP_GGUF} is missing (TOYLLM_REQUIRE_MODELS=1)")
            self.skipTest(f"{LLAMA_CPP_GGUF} is missing (set TOYLLM_MODELS)")
        model = toyllm.Model(LLAMA_CPP_GGUF)
        prompt = "Once upon a time, there was a little girl"
        ids = model.tokenize(prompt)
        _, cache = model.run_with_cache(ids, ablate=[(4, 1)])
        toyllm_cli("attention", "-m", LLAMA_CPP_GGUF, "-p", prompt, "-o", self.path("stories"), "--ablate", "4.1")
        attention = np.load(self.path("stories/attention.npy"))
        for layer in range(model.config["n_layers"]):
            np.testing.assert_array_equal(cache[f"blk.{layer}.weights"], attention[layer])
        expected = toyllm_cli("generate", "-m", LLAMA_CPP_GGUF, "-p", prompt, "--temp", "0", "-n", "8")
        self.assertEqual(model.generate(prompt, n=8, temp=0) + "\n", expected)

    def test_bad_arguments_raise_with_the_library_message(self):
        ids = self.model.tokenize(TIRED)
        cases = [
            (lambda: self.model.run([]), ValueError, "empty"),
            (lambda: self.model.run([100000]), ValueError, "outside the vocabulary"),
            (lambda: self.model.run([1] * 100), ValueError, "context"),
            (lambda: self.model.run(ids, ablate=[(3, 0)]), ValueError, "outside layers"),
            (lambda: self.model.run(ids, ablate=[(0, -1)]), ValueError, "outside layers"),
            (lambda: self.model.run(ids, ablate=[(0, 0)], ablate_mode="half"), ValueError, "half"),
            (lambda: self.model.generate(TIRED, n=1, temp=-1), ValueError, "temp"),
            (lambda: toyllm.Model("/nonexistent/model.gguf"), RuntimeError, "/nonexistent/model.gguf"),
        ]
        for call, error, phrase in cases:
            with self.assertRaises(error) as raised:
                call()
            self.assertIn(phrase, str(raised.exception))
        with self.assertRaises(TypeError):
            self.model.run("not ids")


if __name__ == "__main__":
    unittest.main()
