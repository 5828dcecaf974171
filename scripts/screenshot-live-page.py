#!/usr/bin/python3
"""Screenshots toyllm serve's live page for the README: the article's sentence continued,
its second 它 clicked, one layer/head chosen, and the 宽 sentence compared beside it.
Needs Debian's chromium, chromium-driver, python3-selenium and, for the Chinese text to
show, a CJK font (fonts-noto-cjk).

usage: screenshot-live-page.py TOYLLM_BINARY OUT.png [LAYER HEAD]
"""
import os
import sys

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

os.environ["TOYLLM_BINARY"] = sys.argv[1]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from live_page_test import SENTENCE, WIDE  # noqa: E402
from server_api_test import Serve  # noqa: E402

out, layer, head = sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 1, int(sys.argv[4]) if len(sys.argv) > 4 else 3
options = webdriver.ChromeOptions()
for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1300,3000"]:
    options.add_argument(flag)
with Serve() as server:
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        driver.get(server.url + "/")
        for box, text in (("prompt", SENTENCE), ("prompt-b", WIDE), ("max-tokens", "2")):
            driver.find_element(By.ID, box).clear()
            driver.find_element(By.ID, box).send_keys(text)
        driver.find_element(By.ID, "run").click()
        WebDriverWait(driver, 60).until(lambda d: d.find_element(By.ID, "status").text == "done")
        [t for t in driver.find_elements(By.CSS_SELECTOR, "#tokens span.token") if t.text == "它"][-1].click()
        Select(driver.find_element(By.ID, "layer")).select_by_index(layer)
        Select(driver.find_element(By.ID, "head")).select_by_index(head)
        driver.find_element(By.ID, "compare").click()
        WebDriverWait(driver, 60).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#diff td"))
        driver.execute_script("window.scrollTo(0, 0)")
        driver.save_screenshot(out)
    finally:
        driver.quit()
