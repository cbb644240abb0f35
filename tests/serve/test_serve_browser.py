"""The demo page in a real browser: headless Chromium (Debian's chromium + chromium-driver)
driven by Selenium types a sentence into the NER view, submits it and finds the entities the
API returns; then the same for SST-5's label bars. Saves a screenshot to
ELMO_SCREENSHOT (a path) when set. Skips where the browser is absent."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the `serve` extra (fastapi, uvicorn) is not installed")
pytest.importorskip("uvicorn", reason="the `serve` extra (uvicorn) is not installed")
webdriver = pytest.importorskip("selenium.webdriver",
                                reason="selenium is not installed (pip install selenium)")

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
if not (CHROMIUM and DRIVER):
    pytest.skip("headless Chromium is absent: apt-get install chromium chromium-driver",
                allow_module_level=True)

from live_server import live_server  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

from elmo_experiments.serve.app import create_app, load_models  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def _with_entities(url: str) -> tuple[str, list[tuple]]:
    """A sentence of the NER sample on which the (one-epoch, tiny) model finds entities, and
    the API's entities for it: (type, start, end, text, score)."""
    import httpx

    sentences, tokens = [], []
    for line in (REPO / "reproduction" / "ner" / "sample" / "dev.txt").read_text().splitlines():
        if line.strip() and not line.startswith("-DOCSTART-"):
            tokens.append(line.split()[0])
        elif tokens:
            sentences.append(" ".join(tokens))
            tokens = []
    for start in range(0, len(sentences), 32):
        batch = sentences[start: start + 32]
        results = httpx.post(url + "/predict/ner", json={"texts": batch},
                             timeout=120).json()["results"]
        for text, records in zip(batch, results, strict=True):
            spans = [(s["type"], s["start"], s["end"], s["text"], s["score"])
                     for record in records for s in record["spans"]]
            if spans and len(records) == 1:
                return text, spans
    raise AssertionError("the model finds no entity in the sample's sentences")


@pytest.fixture(scope="module")
def server(archive_of) -> Iterator[tuple[str, object]]:
    models, embedders = load_models([f"ner={archive_of('ner')}",
                                     f"sst5={archive_of('sst5')}"], device="cpu")
    app = create_app(models, embedders)
    with live_server(app) as url:
        yield url, app


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 "--window-size=1100,900"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


def _submit(browser, model: str, fields: dict[str, str]) -> object:
    WebDriverWait(browser, 30).until(
        lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "true")
    browser.find_element(By.CSS_SELECTOR, f'nav button[data-model="{model}"]').click()
    view = browser.find_element(By.ID, f"view-{model}")
    for name, value in fields.items():
        box = view.find_element(By.NAME, name)
        box.clear()
        box.send_keys(value)
    view.find_element(By.CSS_SELECTOR, "button.run").click()
    output = view.find_element(By.CSS_SELECTOR, ".output")
    WebDriverWait(browser, 60).until(lambda d: output.get_attribute("data-done") == "true")
    return view


def test_the_demo_page_renders_the_apis_entities_and_label_bars(server, browser) -> None:
    import httpx

    url, _ = server
    sentence, expected = _with_entities(url)
    browser.get(url + "/")
    view = _submit(browser, "ner", {"text": sentence})
    assert not view.find_elements(By.CSS_SELECTOR, ".output .error")
    shown = [(m.get_attribute("data-type"), int(m.get_attribute("data-start")),
              int(m.get_attribute("data-end")),
              m.find_element(By.CSS_SELECTOR, ".text").text,
              float(m.get_attribute("data-score")))
             for m in view.find_elements(By.CSS_SELECTOR, ".output mark.entity")]
    assert shown == expected and expected
    page_text = view.find_element(By.CSS_SELECTOR, ".output").text
    assert all(token in page_text for token in sentence.split())
    weights = view.find_elements(By.CSS_SELECTOR, ".weights .bar")
    assert len(weights) == 3  # the learned layer weights, one bar per biLM layer
    if os.environ.get("ELMO_SCREENSHOT"):
        browser.save_screenshot(os.environ["ELMO_SCREENSHOT"])

    text = "A gorgeous, witty, seductive movie."
    view = _submit(browser, "sst5", {"text": text})
    api = httpx.post(url + "/predict/sst5", json={"text": text}, timeout=60).json()
    record = api["results"][0][0]
    bars = view.find_elements(By.CSS_SELECTOR, ".output .bar")
    shown_bars = {b.get_attribute("data-label"): float(b.get_attribute("data-probability"))
                  for b in bars}
    assert shown_bars == pytest.approx(record["probabilities"])
    best = view.find_element(By.CSS_SELECTOR, ".output .bar.best")
    assert best.get_attribute("data-label") == record["label"]
