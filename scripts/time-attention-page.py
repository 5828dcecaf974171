#!/usr/bin/python3
"""Times the attention page of a `toyllm attention` folder in headless Chromium.

usage: scripts/time-attention-page.py MAPS_FOLDER

Prints the folder's page bytes (index.html and the layer scripts), then the time from
opening index.html to its first map drawn (the page's body[data-ready]), and the time to
show another layer (its script loaded, decoded and drawn) and every head of it.
Needs Debian's python3-selenium and chromium-driver (scripts/install-deps.sh).
"""
import glob
import os
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait


def main(folder):
    folder = os.path.abspath(folder)
    scripts = sorted(glob.glob(os.path.join(folder, "layer*.js")))
    index = os.path.getsize(os.path.join(folder, "index.html"))
    layer_bytes = [os.path.getsize(s) for s in scripts]
    print("index.html %.1f KB, %d layer scripts of %.1f MB each, %.1f MB in all" %
          (index / 1e3, len(scripts), max(layer_bytes) / 1e6, (index + sum(layer_bytes)) / 1e6))

    options = webdriver.ChromeOptions()
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--window-size=1400,1000"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        wait = WebDriverWait(driver, 120, poll_frequency=0.02)
        body = lambda name: driver.execute_script("return document.body.dataset[arguments[0]]", name)

        start = time.monotonic()
        driver.get("file://" + folder + "/index.html")
        wait.until(lambda d: body("ready") == "1" or body("error"))
        opened = time.monotonic() - start
        if body("error"):
            sys.exit("the page failed: " + body("error"))
        print("first map (layer %s, head %s, %s cells): %.2f s after opening; the page says %s ms" %
              (body("layer"), body("head"), body("cells"), opened, body("drawnMs")))

        last = driver.execute_script("return document.getElementById('layer-select').options.length") - 1
        start = time.monotonic()
        driver.execute_script("const s = document.getElementById('layer-select');"
                              "s.value = arguments[0]; s.onchange();", last)
        wait.until(lambda d: body("loaded") and len(body("loaded").split(",")) == 2)
        print("another layer (%s) loaded and drawn: %.2f s" % (body("layer"), time.monotonic() - start))

        start = time.monotonic()
        driver.execute_script("const s = document.getElementById('head-select');"
                              "s.value = -1; s.onchange();")
        wait.until(lambda d: body("head") == "all")
        print("all %s heads' cells of it: %.2f s" % (body("cells"), time.monotonic() - start))
        if body("error"):
            sys.exit("the page failed: " + body("error"))
    finally:
        driver.quit()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
