"""The attention page of `toyllm attention` in headless Chromium, driven like a user:
choose another layer (its script loaded on demand), hover a cell (tooltip and top weights
of that query), show every head of the layer and hover one; the values shown are
attention.npy's to three decimals. Needs python3-selenium and chromium-driver.

Run by ctest (tests/CMakeLists.txt) with TOYLLM_BINARY naming the toyllm command.
"""
import os
import subprocess
import tempfile
import unittest

import numpy as np

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait
except ImportError:
    webdriver = None

BINARY = os.environ["TOYLLM_BINARY"]
DRIVER = "/usr/bin/chromedriver"
PROMPT = "这个动物并没有过马路，因为它太累了。它指的是"
MISSING = webdriver is None or not os.access(DRIVER, os.X_OK)
if MISSING and os.environ.get("TOYLLM_REQUIRE_MODELS") == "1":
    raise SystemExit("selenium or chromedriver is missing (scripts/install-deps.sh)")


@unittest.skipIf(MISSING, "SELENIUM OR CHROMEDRIVER MISSING: run scripts/install-deps.sh")
class AttentionPageTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        cls.maps = os.path.join(cls.dir.name, "maps")
        subprocess.run([BINARY, "attention", "-p", PROMPT, "-o", cls.maps], check=True,
                       capture_output=True, timeout=60)
        cls.npy = np.load(os.path.join(cls.maps, "attention.npy"))
        options = webdriver.ChromeOptions()
        for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--window-size=1400,1000"):
            options.add_argument(flag)
        cls.driver = webdriver.Chrome(service=Service(DRIVER), options=options)

    @classmethod
    def tearDownClass(cls):
        cls.driver.quit()
        cls.dir.cleanup()

    def body(self, name):
        return self.driver.execute_script("return document.body.dataset[arguments[0]]", name)

    def wait(self, condition):
        WebDriverWait(self.driver, 60, poll_frequency=0.05).until(lambda d: condition() or self.body("error"))
        self.assertIsNone(self.body("error"))

    def hover(self, canvas, q, k):
        """Moves the mouse over cell (q, k) of `canvas` and returns the tooltip's text."""
        t = self.npy.shape[2]
        cell_w, cell_h = canvas.size["width"] / t, canvas.size["height"] / t
        # Offsets from the element's center (Selenium 4).
        ActionChains(self.driver).move_to_element_with_offset(
            canvas, int((k + 0.5) * cell_w - canvas.size["width"] / 2),
            int((q + 0.5) * cell_h - canvas.size["height"] / 2)).perform()
        tooltip = self.driver.find_element(By.ID, "tooltip")
        self.wait(lambda: tooltip.is_displayed())
        return tooltip.text

    def test_layers_load_on_demand_and_hover_shows_the_npy_weights(self):
        layers, heads, t, _ = self.npy.shape
        d = self.driver
        d.get("file://" + self.maps + "/index.html")
        self.wait(lambda: self.body("ready") == "1")
        self.assertEqual(self.body("loaded"), "0")
        self.assertEqual(self.body("cells"), str(t * t))

        last = layers - 1
        Select(d.find_element(By.ID, "layer-select")).select_by_value(str(last))
        self.wait(lambda: self.body("loaded") == "0," + str(last) and self.body("layer") == str(last))
        self.assertEqual(self.body("cells"), str(t * t))

        q, k = t - 1, 2
        text = self.hover(d.find_element(By.ID, "heatmap"), q, k)
        self.assertIn("query %d" % q, text)
        self.assertIn("key %d" % k, text)
        self.assertIn("weight %.3f" % self.npy[last, 0, q, k], text)
        self.assertEqual(self.body("query"), str(q))
        shown = [int(li.get_attribute("data-key")) for li in d.find_elements(By.CSS_SELECTOR, ".top-item")]
        row = self.npy[last, 0, q]
        self.assertEqual(shown[0], int(np.argmax(row)))
        self.assertEqual(len(shown), min(5, int(np.count_nonzero(row))))

        Select(d.find_element(By.ID, "head-select")).select_by_value("-1")
        self.wait(lambda: self.body("head") == "all")
        self.assertEqual(self.body("cells"), str(heads * t * t))
        figures = d.find_elements(By.CSS_SELECTOR, "figure.head-map")
        self.assertEqual(len(figures), heads)
        h = heads - 1
        text = self.hover(figures[h].find_element(By.TAG_NAME, "canvas"), 3, 1)
        self.assertIn("head %d: query 3" % h, text)
        self.assertIn("weight %.3f" % self.npy[last, h, 3, 1], text)


if __name__ == "__main__":
    unittest.main()
