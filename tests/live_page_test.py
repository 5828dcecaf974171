#!/usr/bin/python3
"""The live page of toyllm serve in a real browser (Debian's chromium and chromedriver,
driven by python3-selenium): type the article's sentence, wait for the stream, click the
query token, read the attention cells and the logit lens from the DOM, and compare the
cells with `toyllm attention` on the same text (attention.npy), all layers and heads.

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


class LivePageTest(unittest.TestCase):
    def test_clicked_token_shows_toyllm_attention(self):
        if not (shutil.which("chromium") and os.path.exists("/usr/bin/chromedriver")):
            if os.environ.get("TOYLLM_REQUIRE_MODELS") == "1":
                self.fail("chromium or chromedriver is missing (scripts/install-deps.sh)")
            self.skipTest("*** SKIPPED: chromium or chromedriver is missing ***")
        options = webdriver.ChromeOptions()
        for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]:
            options.add_argument(flag)
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

                subprocess.run([TOYLLM, "attention", "-p", text, "-o", out, "-t", "1"], check=True,
                               capture_output=True)
                want = np.load(os.path.join(out, "attention.npy"))
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
                driver.save_screenshot(os.path.join(tempfile.gettempdir(), "toyllm_live_page.png"))
            finally:
                driver.quit()


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
