"""Issue 16 point 4: the context page at ``GET /ui/``, in headless Chromium (the Debian
package) over the Chrome DevTools Protocol: it renders from the token in the URL fragment, its
bar's proportions are the inspection's numbers, it follows live updates, a screenshot is saved,
and it requests nothing from any host but the daemon."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from openwork_core.daemon.desktop_schemas import ContextInspectionBody, ContextOverviewBody
from openwork_core.models.adapters.scripted import ScriptedModel, ScriptedResponse, scripted_events
from openwork_core.models.port import ModelEvent, ModelRequest, TokenUsage
from openwork_core.storage.postgres.store import PostgresStore
from tests.support.chromium import headless_page
from tests.support.live_app import TOKEN, live_app
from tests.support.runtime import runtime

ROOT = Path(__file__).resolve().parents[3]
ARTIFACTS = Path(os.environ.get("OPENWORK_TEST_ARTIFACTS", ROOT / "tests" / "artifacts"))

_DOM = """(() => {
  const bar = document.getElementById("bar");
  const width = bar.getBoundingClientRect().width;
  const line = document.getElementById("auto-compact-line");
  return {
    state: document.body.dataset.state,
    tokenFormShown: getComputedStyle(document.getElementById("token-form")).display !== "none",
    hash: location.hash,
    stored: sessionStorage.getItem("openwork.token"),
    contextWindow: Number(bar.dataset.contextWindow),
    barWidth: width,
    segments: [...bar.querySelectorAll(".segment")].map((s) => ({
      region: s.dataset.region, tokens: Number(s.dataset.tokens),
      width: s.getBoundingClientRect().width })),
    lineTokens: Number(line.dataset.tokens),
    lineLeft: line.getBoundingClientRect().left - bar.getBoundingClientRect().left,
    worldState: [...document.querySelectorAll("#world-state tbody tr")].map((r) => ({
      section: r.dataset.section, text: r.textContent })),
    largest: document.querySelectorAll("#largest tbody tr").length,
    sessions: [...document.querySelectorAll("#sessions li")].map((li) => li.dataset.sessionId),
    title: document.getElementById("session-title").textContent,
    updates: window.openworkPage.updates,
  };
})()"""


_PASTE = """(() => {
  document.getElementById("token-input").value = "TOKEN";
  document.getElementById("token-form").requestSubmit();
  return true;
})()"""
_REFUSED = """new Promise((resolve) => {
  const status = document.getElementById("status");
  const check = () => status.textContent.includes("refused") ? resolve(status.textContent) : null;
  new MutationObserver(check).observe(status, { childList: true, characterData: true, subtree: true });
  check();
})"""


async def test_the_context_page_draws_the_inspection_follows_live_updates_and_stays_on_the_daemon(
    store: PostgresStore, tmp_path: Path
) -> None:
    release = asyncio.Event()

    async def held(_request: ModelRequest) -> AsyncIterator[ModelEvent]:
        await release.wait()
        for event in scripted_events(ScriptedResponse(text="second answer")):
            yield event

    model = ScriptedModel([ScriptedResponse(text="first answer " * 50), held])
    async with (
        runtime(store, tmp_path, model) as rt,
        live_app(rt.core) as app,
        app.client() as client,
    ):
        sid = await rt.new_session()
        await rt.run_turn(sid, "Explain the context window\nin detail")
        inspection = (await client.get(f"/v1/sessions/{sid}/context")).json()
        ContextInspectionBody.model_validate(inspection)

        async with headless_page(tmp_path / "chromium-profile") as page:
            loaded = page.next_event("Page.loadEventFired")
            await page.send("Page.navigate", {"url": f"{app.url}/ui/#token={TOKEN}"})
            async with asyncio.timeout(30):
                await loaded
            await page.evaluate("window.openworkPage.ready")
            dom: dict[str, Any] = await page.evaluate(_DOM)

            assert dom["state"] == "ready" and dom["tokenFormShown"] is False
            assert "token" not in dom["hash"] and dom["stored"] == TOKEN
            assert dom["sessions"] == [sid]
            assert dom["title"] == "Explain the context window"
            budget, limits = inspection["budget"], inspection["limits"]
            window = limits["context_window"]
            assert dom["contextWindow"] == window
            tokens = {s["region"]: s["tokens"] for s in dom["segments"]}
            assert tokens["system"] == budget["system_context_tokens"]
            assert tokens["conversation"] == budget["conversation_tokens"]
            assert tokens["tools"] == budget["tool_surface_tokens"]
            assert (
                tokens["free"]
                == limits["effective_input_tokens"] - budget["estimated_input_tokens"]
            )
            assert sum(tokens.values()) == window
            for segment in dom["segments"]:  # each drawn width is its share of the window
                assert abs(segment["width"] - dom["barWidth"] * segment["tokens"] / window) < 1
            threshold = min(limits["auto_compact_token_limit"], limits["effective_input_tokens"])
            assert dom["lineTokens"] == threshold - budget["reserved_output_tokens"]
            assert abs(dom["lineLeft"] - dom["barWidth"] * dom["lineTokens"] / window) < 1.5

            world_state_ids = {
                p["message_id"] for p in inspection["provenance"] if p.get("kind") == "world_state"
            }
            assert world_state_ids
            assert len(dom["worldState"]) == len(world_state_ids)
            for row in dom["worldState"]:  # carried by a Conversation item, no internal id
                assert "Conversation item " in row["text"], row
                assert not any(m in row["text"] for m in world_state_ids), row
            assert dom["largest"] >= 5

            shot = await page.screenshot(ARTIFACTS / "context-page.png")
            assert shot.startswith(b"\x89PNG") and len(shot) > 10_000

            await page.evaluate("window.__nextRender = window.openworkPage.nextRender(); true")
            accepted = await client.post(
                f"/v1/sessions/{sid}/turns",
                json={"client_request_id": "live", "input": [{"type": "text", "text": "more"}]},
            )
            assert accepted.status_code == 202
            await model.wait_for_requests(2, timeout=20)
            release.set()
            renders = await page.evaluate("window.__nextRender")
            assert renders >= 2
            live: dict[str, Any] = await page.evaluate(_DOM)
            assert live["updates"] > 0
            await page.evaluate('window.openworkPage.renderedAfter("turn_finished", 1)')
            after = (await client.get(f"/v1/sessions/{sid}/context")).json()["budget"]
            final: dict[str, Any] = await page.evaluate(_DOM)
            drawn = {s["region"]: s["tokens"] for s in final["segments"]}
            assert drawn["conversation"] == after["conversation_tokens"]
            assert drawn["conversation"] > tokens["conversation"]

            # a pasted token, once the tab has none: the form, a refused token, then the page
            await page.evaluate("sessionStorage.clear(); true")
            loaded = page.next_event("Page.loadEventFired")
            await page.send("Page.navigate", {"url": f"{app.url}/ui/"})
            async with asyncio.timeout(30):
                await loaded
            assert await page.evaluate("document.body.dataset.state") == "token"
            await page.evaluate(_PASTE.replace("TOKEN", "wrong-token"))
            assert "refused" in await page.evaluate(_REFUSED)
            await page.evaluate(_PASTE.replace("TOKEN", TOKEN))
            await page.evaluate("window.openworkPage.ready")
            assert await page.evaluate('sessionStorage.getItem("openwork.token")') == TOKEN

            assert page.requests, "the page made no request"
            foreign = [u for u in page.requests if not u.startswith((f"{app.url}/", "data:"))]
            assert foreign == [], foreign


_DETAILS = """(() => {
  const rows = (id) => [...document.querySelectorAll(`#${id} tbody tr`)];
  return {
    meta: document.getElementById("session-meta").textContent,
    model: document.getElementById("session-meta").dataset.model,
    warnings: [...document.querySelectorAll("#warnings li")].map((li) => ({
      code: li.dataset.code, text: li.textContent })),
    usage: document.getElementById("usage").textContent,
    ratio: document.getElementById("usage").dataset.cacheHitRatio,
    open: [...document.querySelectorAll("details.region")].filter((d) => d.open)
      .map((d) => d.dataset.region),
    system: [...document.querySelectorAll("#region-system section.part")].map((s) => ({
      key: s.dataset.key, tokens: Number(s.dataset.tokens),
      text: s.querySelector("pre").textContent })),
    systemVisible: [...document.querySelectorAll("#region-system pre")]
      .some((p) => p.checkVisibility()),
    conversation: rows("region-conversation").map((r) => ({
      index: Number(r.dataset.index), tokens: Number(r.dataset.tokens),
      highlighted: r.classList.contains("highlight") })),
    tools: rows("region-tools").map((r) => ({ name: r.dataset.tool, tokens: Number(r.dataset.tokens) })),
    carriedBy: [...document.querySelectorAll("#world-state tbody tr")].map((r) => ({
      index: Number(r.dataset.index), text: r.lastChild.textContent })),
    text: document.body.innerText,
  };
})()"""

_OPEN_SYSTEM_AND_FOLLOW_A_WORLD_STATE_LINK = """(() => {
  document.querySelector("#region-system summary").click();
  document.querySelector("#world-state tbody tr button").click();
  return true;
})()"""


async def test_the_context_page_names_the_model_shows_warnings_and_usage_and_opens_each_region(
    store: PostgresStore, tmp_path: Path
) -> None:
    """Issue 25 point 7: the model's name (not "default model"), the inspection's warnings (here
    a suspected truncation: 100 input tokens reported for thousands sent), the usage with the
    cache-hit ratio, and each region opening to its items with their sizes; "carried by" names
    the Conversation item, never an internal id."""
    usage = TokenUsage(input_tokens=100, cached_input_tokens=40, output_tokens=5)
    model = ScriptedModel([ScriptedResponse(text="an answer", usage=usage)])
    async with (
        runtime(store, tmp_path, model) as rt,
        live_app(rt.core) as app,
        app.client() as client,
    ):
        sid = await rt.new_session()
        await rt.run_turn(sid, "Show me the regions")
        inspection = (await client.get(f"/v1/sessions/{sid}/context")).json()
        overview = (await client.get(f"/v1/sessions/{sid}/context/overview")).json()
        ContextOverviewBody.model_validate(overview)

        async with headless_page(tmp_path / "chromium-profile") as page:
            loaded = page.next_event("Page.loadEventFired")
            await page.send("Page.navigate", {"url": f"{app.url}/ui/#token={TOKEN}"})
            async with asyncio.timeout(30):
                await loaded
            await page.evaluate("window.openworkPage.ready")
            before: dict[str, Any] = await page.evaluate(_DETAILS)
            await page.evaluate(_OPEN_SYSTEM_AND_FOLLOW_A_WORLD_STATE_LINK)
            after: dict[str, Any] = await page.evaluate(_DETAILS)
            shot = await page.screenshot(ARTIFACTS / "context-page-regions.png")

    assert before["model"] == "scripted-model" and "scripted-model" in before["meta"]
    assert "default model" not in before["text"]
    assert [w["code"] for w in before["warnings"]] == ["input_truncation_suspected"]
    assert "reported 100 input tokens" in before["warnings"][0]["text"]
    assert overview["usage"]["cache_hit_ratio"] == 0.4
    assert float(before["ratio"]) == 0.4 and "cache-hit ratio 40.0 %" in before["usage"]
    assert before["open"] == [], before["open"]
    assert not before["systemVisible"], "closed until opened"

    regions = overview["regions"]
    assert [(p["key"], p["text"]) for p in before["system"]] == [
        (p["key"], p["content"]) for p in inspection["system"]
    ]
    assert [p["tokens"] for p in before["system"]] == [p["tokens"] for p in regions["system"]]
    assert [r["index"] for r in before["conversation"]] == list(
        range(len(inspection["conversation"]))
    )
    assert [r["tokens"] for r in before["conversation"]] == [
        i["tokens"] for i in regions["conversation"]
    ]
    assert [t["name"] for t in before["tools"]] == [t["name"] for t in inspection["tools"]]
    assert [t["tokens"] for t in before["tools"]] == [t["tokens"] for t in regions["tools"]]

    carried = before["carriedBy"]
    assert carried and all(c["text"] == f"Conversation item {c['index'] + 1}" for c in carried)
    internal_ids = {p["message_id"] for p in inspection["provenance"] if p.get("message_id")}
    assert internal_ids and not any(i in before["text"] for i in internal_ids)

    assert set(after["open"]) == {"system", "conversation"} and after["systemVisible"]
    (highlighted,) = [r["index"] for r in after["conversation"] if r["highlighted"]]
    assert highlighted == carried[0]["index"]
    assert shot.startswith(b"\x89PNG")
