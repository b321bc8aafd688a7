# The chat page at / in a real browser (Debian's headless Chromium driven by
# Selenium): it loads and finds the model, sends a message and streams the
# answer with a speed line, stops a long answer (the server logs the request
# as aborted, i.e. the generation was cancelled), keeps the conversation
# across a reload, and renders Markdown without letting model output inject
# markup. A screenshot goes to build/test-artifacts/web_chat.png.
import os
import pathlib
import shutil
import time

import pytest

from server_fixture import MODEL_ID, ServerProcess

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium")
DRIVER = shutil.which("chromedriver")


@pytest.fixture(scope="module")
def browser():
    if not (CHROMIUM and DRIVER):
        message = "Debian's chromium and chromium-driver are needed (scripts/test.sh installs them)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900"):
        opts.add_argument(arg)
    driver = webdriver.Chrome(service=Service(DRIVER), options=opts)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def server(tessera_bin, model_path):
    srv = ServerProcess(tessera_bin, model_path)
    yield srv
    assert srv.stop() == 0, srv.final_log


def wait_for(predicate, timeout=120, what="condition"):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def set_field(driver, field_id, value):
    driver.execute_script("const e = document.getElementById(arguments[0]); e.value = arguments[1];"
                          "e.dispatchEvent(new Event('change'));", field_id, str(value))


def send(driver, text):
    from selenium.webdriver.common.by import By
    box = driver.find_element(By.ID, "input")
    box.send_keys(text)
    driver.find_element(By.ID, "send").click()


def assistant_texts(driver):
    return driver.execute_script(
        "return [...document.querySelectorAll('.msg.assistant .body')].map(e => e.textContent)")


def test_page_loads_and_finds_the_model(browser, server):
    from selenium.webdriver.common.by import By
    browser.get(server.base_url + "/")
    browser.execute_script("localStorage.clear()")
    browser.get(server.base_url + "/")
    assert browser.title == "tessera"
    wait_for(lambda: browser.find_element(By.ID, "model").text == MODEL_ID, 30, "the model id")


def test_send_streams_an_answer_with_speed(browser, server):
    from selenium.webdriver.common.by import By
    set_field(browser, "temperature", 0)
    set_field(browser, "max-tokens", 48)
    send(browser, "What is the capital of France? Answer in one sentence.")
    wait_for(lambda: "tokens/s" in browser.find_element(By.ID, "speed").text, 120, "the speed line")
    assert "Paris" in assistant_texts(browser)[-1]
    assert browser.find_element(By.ID, "send").is_enabled()
    assert not browser.find_element(By.ID, "stop").is_enabled()
    shot = ROOT / "build" / "test-artifacts" / "web_chat.png"
    shot.parent.mkdir(parents=True, exist_ok=True)
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 1000


def test_stop_cancels_the_generation(browser, server):
    from selenium.webdriver.common.by import By
    set_field(browser, "temperature", 0.8)
    set_field(browser, "max-tokens", 4000)
    n_before = len(assistant_texts(browser))
    send(browser, "Write a very long story about a lighthouse keeper.")
    wait_for(lambda: len(assistant_texts(browser)) > n_before and len(assistant_texts(browser)[-1]) > 20, 120,
             "the first words")
    browser.find_element(By.ID, "stop").click()
    wait_for(lambda: "(stopped)" in browser.find_element(By.ID, "speed").text, 30, "the stop")
    assert browser.find_element(By.ID, "send").is_enabled()
    # The server saw the client go and logged the request as aborted.
    wait_for(lambda: any(" POST /v1/chat/completions 200 " in l and l.endswith(" aborted")
                         for l in server.log_text().splitlines()), 30, "the aborted request in the access log")


def test_conversation_survives_a_reload(browser, server):
    before = assistant_texts(browser)
    browser.refresh()
    wait_for(lambda: assistant_texts(browser) == before, 30, "the restored conversation")
    assert len(before) == 2


def test_markdown_rendering_is_escaped(browser, server):
    html = browser.execute_script("return renderMarkdown(arguments[0])",
                                  "# Title\n**bold** and `x<y`\n\n```python\nprint('<b>')\n```\n- one\n- two\n"
                                  "<img src=x onerror=alert(1)>")
    assert '<pre><code class="lang-python">print(\'&lt;b&gt;\')</code></pre>' in html
    assert "<strong>bold</strong>" in html and "<code>x&lt;y</code>" in html
    assert "<ul><li>one</li><li>two</li></ul>" in html and "<h3>Title</h3>" in html
    assert "<img" not in html and "&lt;img" in html
