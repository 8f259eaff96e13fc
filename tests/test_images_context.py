"""Images in the context engine: counted by the provider's rule, cleared like old tool results (a
one-line stub naming the file), archived before they leave, named by the record, and brought back
by recall to a model that takes images."""

from __future__ import annotations

import io
import os
from pathlib import Path

from PIL import Image

from agent_cli.context.clear import apply_clear, clearable, image_names, image_stub, is_stub
from agent_cli.context.record_parts import assemble_record
from agent_cli.core.images import ImageBlock
from agent_cli.core.messages import Message, TextBlock, ToolResult, ToolUse
from agent_cli.store.archive import Archive
from agent_cli.tokens.images import image_tokens
from agent_cli.tokens.tally import tally_message
from agent_cli.tools.base import ToolContext
from agent_cli.tools.context_tools import Recall
from agent_cli.tools.images import load_image


def shot(
    name: str, width: int = 1280, height: int = 800, shade: int = 0, *, noisy: bool = False
) -> ImageBlock:
    out = io.BytesIO()
    if noisy:
        Image.frombytes("RGB", (width, height), os.urandom(width * height * 3)).save(out, "PNG")
    else:
        Image.new("RGB", (width, height), (shade, 100, 200)).save(out, "PNG")
    return load_image(out.getvalue(), name).block


def _round(i: int, image: ImageBlock) -> list[Message]:
    use = ToolUse(f"call_{i}", "read_file", {"path": image.name})
    said = f"[image {image.name}: PNG, 1280x800 px, 5 KB] (attached below)"
    result = ToolResult(use.id, said, images=(image,))
    return [Message("assistant", (use,)), Message("user", (result,))]


# ---- counting ----------------------------------------------------------------------------------


def test_an_image_counts_by_the_providers_rule_never_by_its_base64() -> None:
    assert image_tokens(1000, 750, "pixels") == 1000  # width * height / 750
    assert image_tokens(4000, 3000, "pixels") <= 1600  # the API scales it down first
    assert image_tokens(1024, 1024, "tiles") == max(85 + 170 * 4, 1024)  # tiles vs patches
    big = shot("big.png", 400, 300, noisy=True)
    message = Message("user", (TextBlock("see"), big))
    tokens = tally_message(message, lambda text: len(text) // 4, "pixels")
    assert tokens.images == image_tokens(400, 300, "pixels") == 160
    assert tokens.total < 200 < 100_000 < len(big.data) // 4  # the base64 is not counted as text


# ---- clearing ----------------------------------------------------------------------------------


def test_old_images_are_cleared_to_a_stub_naming_the_file() -> None:
    history = [Message.user("look at the screenshots")]
    for i in range(4):
        history += _round(i, shot(f"s{i}.png", shade=i))
    counts = [tally_message(m, lambda t: len(t) // 4, "pixels").total for m in history]
    to_clear, freed = clearable(history, counts, protect_tokens=1500)
    assert set(to_clear) == {2, 4, 6}  # every result but the newest, which the budget protects
    plan = apply_clear(history, to_clear, freed)
    stubs = [m.tool_results[0] for m in plan.messages[2:7:2]]
    assert all(is_stub(r) and not r.images for r in stubs)
    assert "s0.png (1280x800 px)" in stubs[0].content and 'recall("call_0")' in stubs[0].content
    assert plan.messages[-1].images == history[-1].images  # the newest kept
    assert [m.images for m in plan.originals if m.images]  # the originals, images and all, go to disk first


def test_an_image_the_user_attached_is_cleared_too() -> None:
    attached = shot("bug.png")
    history = [
        Message("user", (TextBlock("why does @bug.png look wrong?"), TextBlock("[attached]"), attached)),
        Message.assistant("the button overlaps"),
    ]
    for i in range(3):
        history += _round(i, shot(f"s{i}.png", shade=i))
    counts = [tally_message(m, lambda t: len(t) // 4, "pixels").total for m in history]
    to_clear, freed = clearable(history, counts, protect_tokens=1500)
    assert 0 in to_clear
    plan = apply_clear(history, to_clear, freed)
    first = plan.messages[0]
    assert not first.images and first.content[0] == TextBlock("why does @bug.png look wrong?")  # words kept
    assert first.content[2] == TextBlock(image_stub(attached))
    assert 'recall("bug.png")' in image_stub(attached)
    assert image_names(plan.messages) == ["bug.png", "s0.png", "s1.png", "s2.png"]


def test_the_record_names_the_images_it_replaced() -> None:
    record = assemble_record(
        body="work", users="", transcript="span-001.jsonl", replaced=4, recall_hint='"x"',
        images=["bug.png", "s0.png"],
    )  # fmt: skip
    intro = record.split("\n\n")[0]
    assert "bug.png, s0.png" in intro and "recall(" in intro


# ---- archive and recall -----------------------------------------------------------------------


def test_recall_brings_an_archived_image_back(tmp_path: Path) -> None:
    archive = Archive(tmp_path / ".transcripts" / "s1")
    attached = shot("bug.png", shade=9)
    history = [Message("user", (TextBlock("see @bug.png"), attached)), *_round(1, shot("s1.png", shade=1))]
    archive.write_span(history, "clear")
    assert archive.images("call_1") == [history[2].tool_results[0].images[0]]
    assert archive.images("bug.png") == [attached]  # byte for byte, as it was sent
    assert archive.images("nothing-like-it") == []
    recall = Recall()

    def ctx(images: bool) -> ToolContext:
        search = lambda q: archive.search(q, 4000)  # noqa: E731
        return ToolContext(root=tmp_path, recall=search, recall_images=archive.images, images=images)

    out = recall.run({"query": "bug.png"}, ctx(True))
    assert out.images == (attached,) and "bug.png (1280x800 px)" in out.content
    told = recall.run({"query": "bug.png"}, ctx(False))
    assert not told.images and "does not take images" in told.content


def test_context_shows_what_the_images_take(tmp_path: Path) -> None:
    from agent_cli.config.settings import ContextSettings
    from agent_cli.context.engine import ContextEngine, Frame
    from agent_cli.providers.model_names import tokenizer_for
    from agent_cli.tokens.counter import TokenCounter

    engine = ContextEngine(
        settings=ContextSettings(),
        window=200_000,
        max_output=32_000,
        counter=TokenCounter("claude-haiku-4-5", tokenizer_for("claude-haiku-4-5", "anthropic")),
        archive=Archive(tmp_path / "s"),
        summarize=lambda request: "unused",
    )
    history = [Message.user("look"), *_round(0, shot("s0.png")), Message.assistant("a dialog")]
    bd = engine.breakdown(history, Frame("system", ()))
    assert ("images", bd.images) in [(label, tokens) for label, tokens, _ in bd.rows()]
    assert bd.images >= image_tokens(1280, 800, "pixels")  # its pixels, not its base64
    assert bd.system + bd.tools + bd.summary + bd.messages + bd.tool_results + bd.images == bd.total


def test_a_checkpoint_names_an_image_already_logged_and_reads_back_whole(tmp_path: Path) -> None:
    from agent_cli.store.log_records import HistoryRecord, read_log
    from agent_cli.store.redact import Redactor
    from agent_cli.store.session_log import SessionLog

    image = shot("s0.png", 400, 300, noisy=True)
    attached = Message("user", (TextBlock("see"), image))
    rounds = _round(1, shot("s1.png", 300, 200, noisy=True))
    with SessionLog.create(tmp_path, redactor=Redactor(), meta={"model": "m"}) as log:
        for message in (attached, *rounds):
            log.log_message(message)
        for reason in ("clear", "summarize", "clear"):
            log.log_history([attached, *rounds], reason)
        path = log.path
    text = path.read_text()
    read = rounds[1].tool_results[0].images[0]
    # Each written with its message, named by its digest at each checkpoint.
    assert text.count(image.data) == 1 and text.count(read.data) == 1
    records, skipped = read_log(path)
    checkpoints = [r for r in records if isinstance(r, HistoryRecord)]
    assert skipped == 0 and len(checkpoints) == 3
    assert all(r.messages[0].content == attached.content for r in checkpoints)
    assert all(r.messages[2].tool_results[0].images == (read,) for r in checkpoints)
    # A log that lost the line holding the data: the checkpoint says so instead of sending nothing.
    lines = [ln for ln in text.splitlines() if image.data not in ln and read.data not in ln]
    path.write_text("\n".join(lines) + "\n")
    records, _ = read_log(path)
    first = next(r for r in records if isinstance(r, HistoryRecord)).messages
    assert not first[0].images and "its data is not in the session log" in first[0].text
    result = first[2].tool_results[0]
    assert not result.images and "not in the session log" in result.content


def test_export_names_an_image_and_never_its_bytes() -> None:
    from agent_cli.ui.markdown_export import _message

    image = shot("bug\x1b[2J.png", 40, 30)
    lines = _message(Message("user", (TextBlock("see"), image)), {})
    assert lines[-1] == "- image `bug\\x1b[2J.png` (40x30 px)"
    assert image.data not in "\n".join(lines)
