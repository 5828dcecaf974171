#!/usr/bin/python3
"""The live page of toyllm serve in a real browser (Debian's chromium and chromedriver,
driven by python3-selenium): type the article's sentence, wait for the stream, click the
query token, read the attention cells and the logit lens from the DOM, and compare the
cells with `toyllm attention` on the same text (attention.npy), all layers and heads; the
whole-model grid's panels and pixels; the second prompt's view (累 vs 宽) against the
difference of the two texts' attention.npy, and two prompts of different lengths; no
script errors.

usage: live_page_test.py TOYLLM_BINARY
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_api_test import Serve, TOYLLM  # noqa: E402

SENTENCE = "这个动物并没有过马路，因为它太累了。它指的是"
WIDE = "这个动物并没有过马路，因为它太宽了。它指的是"


def attention_npy(text, out):
    subprocess.run([TOYLLM, "attention", "-p", text, "-o", out, "-t", "1"], check=True, capture_output=True)
    return np.load(os.path.join(out, "attention.npy"))


def numbers(driver, selector):
    return np.array([float(c.text) for c in driver.find_elements(By.CSS_SELECTOR, selector)])


class LivePageTest(unittest.TestCase):
    def test_clicked_token_shows_toyllm_attention(self):
        if not (shutil.which("chromium") and os.path.exists("/usr/bin/chromedriver")):
            if os.environ.get("TOYLLM_REQUIRE_MODELS") == "1":
                self.fail("chromium or chromedriver is missing (scripts/install-deps.sh)")
            self.skipTest("*** SKIPPED: chromium or chromedriver is missing ***")
        options = webdriver.ChromeOptions()
        for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]:
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        with Serve() as server, tempfile.TemporaryDirectory() as out:
            driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
            try:
                driver.get(server.url + "/")
                prompt = driver.find_element(By.ID, "prompt")
                prompt.clear()
                prompt.send_keys(SENTENCE)
                driver.find_element(By.ID, "max-tokens").clear()
                driver.find_element(By.ID, "max-tokens").send_keys("2")
                driver.find_element(By.ID, "run").click()
                WebDriverWait(driver, 60).until(
                    lambda d: d.find_element(By.ID, "status").text in ("done", "error"))
                self.assertEqual(driver.find_element(By.ID, "status").text, "done",
                                 driver.find_element(By.ID, "error").text)
                text = driver.find_element(By.ID, "continuation").text
                self.assertTrue(text.startswith(SENTENCE))
                self.assertEqual(text, SENTENCE + "动物。")  # the model's greedy answer

                want = attention_npy(text, out)
                tokens = driver.find_elements(By.CSS_SELECTOR, "#tokens span.token")
                self.assertEqual(len(tokens), want.shape[2])
                # The second 它: the query whose head resolves it.
                query = [i for i, t in enumerate(tokens) if t.text == "它"][-1]
                tokens[query].click()
                for layer in range(want.shape[0]):
                    Select(driver.find_element(By.ID, "layer")).select_by_index(layer)
                    for head in range(want.shape[1]):
                        Select(driver.find_element(By.ID, "head")).select_by_index(head)
                        cells = driver.find_elements(By.CSS_SELECTOR, "#attention-row td.weight")
                        got = np.array([float(c.text) for c in cells])
                        np.testing.assert_allclose(got, want[layer, head, query, :query + 1], rtol=1e-5, atol=1e-7)
                WebDriverWait(driver, 30).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#lens tr")) > 1)
                stages = driver.find_elements(By.CSS_SELECTOR, "#lens tr")
                self.assertEqual(len(stages), 1 + 1 + want.shape[0])  # header, embed, each block
                self.check_model_grid(driver, want, query)
                self.check_second_prompt(driver, query, out)
                self.assertEqual(driver.find_element(By.ID, "error").text, "")
                errors = [e for e in driver.get_log("browser")
                          if e["level"] == "SEVERE" and e.get("source") == "javascript"]
                self.assertEqual(errors, [])
                driver.save_screenshot(os.path.join(tempfile.gettempdir(), "toyllm_live_page.png"))
            finally:
                driver.quit()

    def check_model_grid(self, driver, want, query):
        """layers × heads panels of T × T cells, each cell the color of its attention.npy weight."""
        layers, heads, t, _ = want.shape
        panels = driver.find_elements(By.CSS_SELECTOR, "#model-grid figure")
        self.assertEqual(len(panels), layers * heads)
        self.assertEqual([(int(p.get_attribute("data-layer")), int(p.get_attribute("data-head"))) for p in panels],
                         [(l, h) for l in range(layers) for h in range(heads)])
        for i, panel in enumerate(panels):
            canvas = panel.find_element(By.TAG_NAME, "canvas")
            self.assertEqual((int(canvas.get_attribute("data-rows")), int(canvas.get_attribute("data-cols"))), (t, t))
            if i % (heads + 1):
                continue  # a diagonal of panels is enough for the pixels
            layer, head = divmod(i, heads)
            for q, k in [(query, 0), (query, query), (t - 1, 1), (2, 1)]:
                got, expected = driver.execute_script(
                    "const c = arguments[0], px = c.width / c.dataset.cols;"
                    "const d = c.getContext('2d').getImageData((arguments[2] + 0.5) * px, (arguments[1] + 0.5) * px, 1, 1).data;"
                    "return [[d[0], d[1], d[2]], toyllmHeatmap.rgb(arguments[3])];",
                    canvas, q, k, float(want[layer, head, q, k]))
                self.assertEqual(got, expected, (layer, head, q, k))
        # A click on a panel chooses its layer and head.
        panels[-1].click()
        self.assertEqual(Select(driver.find_element(By.ID, "layer")).first_selected_option.text, f"layer {layers - 1}")
        self.assertEqual(Select(driver.find_element(By.ID, "head")).first_selected_option.text, f"head {heads - 1}")

    def compare(self, driver, first, second):
        for box, text in [("prompt", first), ("prompt-b", second)]:
            driver.find_element(By.ID, box).clear()
            driver.find_element(By.ID, box).send_keys(text)
        driver.find_element(By.ID, "compare").click()
        WebDriverWait(driver, 60).until(
            lambda d: d.find_element(By.ID, "compare-status").text in ("done", "error"))
        self.assertEqual(driver.find_element(By.ID, "compare-status").text, "done",
                         driver.find_element(By.ID, "error").text)

    def check_second_prompt(self, driver, query, out):
        """累 vs 宽: each prompt's row and their difference equal attention.npy's, every layer and head."""
        tired = attention_npy(SENTENCE, os.path.join(out, "tired"))
        wide = attention_npy(WIDE, os.path.join(out, "wide"))
        self.assertEqual(tired.shape, wide.shape)
        self.compare(driver, SENTENCE, WIDE)
        self.assertIn(f"query position {query}", driver.find_element(By.ID, "compare-note").text)
        for layer in range(tired.shape[0]):
            Select(driver.find_element(By.ID, "layer")).select_by_index(layer)
            for head in range(tired.shape[1]):
                Select(driver.find_element(By.ID, "head")).select_by_index(head)
                a, b = tired[layer, head, query, :query + 1], wide[layer, head, query, :query + 1]
                np.testing.assert_allclose(numbers(driver, "#compare-a td.weight"), a, rtol=1e-5, atol=1e-7)
                np.testing.assert_allclose(numbers(driver, "#compare-b td.weight"), b, rtol=1e-5, atol=1e-7)
                # shown with 4 decimals: within half a unit of the last one
                np.testing.assert_allclose(numbers(driver, "#diff td.diff"), a - b, rtol=0, atol=5.01e-5)
        self.assertGreater(np.abs(tired - wide).max(), 0.01)  # the one word does move some head
        # Prompts of different lengths: both maps, no difference, and a note saying why.
        self.compare(driver, SENTENCE, "它太宽了")
        self.assertIn("differ in token count", driver.find_element(By.ID, "compare-note").text)
        self.assertEqual(driver.find_elements(By.CSS_SELECTOR, "#diff td.diff"), [])
        self.assertEqual(len(driver.find_elements(By.CSS_SELECTOR, "#compare-a td.weight")), query + 1)
        self.assertGreater(len(driver.find_elements(By.CSS_SELECTOR, "#compare-b td.weight")), 0)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
