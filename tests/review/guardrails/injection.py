"""Case text that spells control tokens: every public text field of a case, and the special-token
spellings of each model family the native interfaces serve (helpers of ``test_injection``).

The Harmony, Llama 3 and Llama 4 lists are the tokenizers' own (every special token, reserved
ones included), and so is SmolLM2's: every control token of the embedded model's GGUF vocabulary
(ChatML roles and the code-corpus markers StarCoder's vocabulary left to it). The Qwen/ChatML,
Granite and Gemma lists are written from the vendors' sources (Qwen's tokenizer configs, IBM's
granite-io list of Granite 3.3's special tokens, Gemma 3's tokenizer config), since those
tokenizers are not available offline.
"""

from __future__ import annotations

from typing import Any

from gguf import GGUFReader, TokenType

from authpairs.backends.local_server import default_gguf_path
from authpairs.cases.examples import load_examples
from authpairs.cases.models import PublicCase
from authpairs.review.guardrails.harmony_vocab import harmony_encoding
from authpairs.review.guardrails.llama_vocab import llama_tokenizer

HARMONY = sorted(harmony_encoding().special_tokens_set)
LLAMA3 = sorted(llama_tokenizer(3).special_tokens)
LLAMA4 = sorted(llama_tokenizer(4).special_tokens)
CHATML = ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<|object_ref_start|>",
          "<|object_ref_end|>", "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>",
          "<|vision_start|>", "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>",
          "<|video_pad|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>",
          "<|repo_name|>", "<|file_sep|>", "<tool_call>", "</tool_call>", "<tool_response>",
          "</tool_response>", "<think>", "</think>"]
"""Qwen2.5/Qwen3's added tokens (ChatML roles, vision and fill-in-the-middle markers, tags)."""
GRANITE = ["<|end_of_text|>", "<fim_prefix>", "<fim_middle>", "<fim_suffix>", "<fim_pad>",
           "<filename>", "<gh_stars>", "<issue_start>", "<issue_comment>", "<issue_closed>",
           "<jupyter_start>", "<jupyter_text>", "<jupyter_code>", "<jupyter_output>",
           "<empty_output>", "<commit_before>", "<commit_msg>", "<commit_after>", "<reponame>",
           "<|start_of_role|>", "<|end_of_role|>", "<|tool_call|>", "<|start_of_cite|>",
           "<|end_of_cite|>", "<|start_of_plugin|>", "<|end_of_plugin|>"]
"""Granite 3.3's special tokens (IBM granite-io's complete list; 4.x keeps the role tokens)."""
GEMMA = ["<pad>", "<eos>", "<bos>", "<unk>", "<mask>", "[@BOS@]",
         *(f"<unused{n}>" for n in range(99)), "<start_of_turn>", "<end_of_turn>",
         "<start_of_image>", "<end_of_image>", "<image_soft_token>"]
"""Gemma 3's special tokens (Nemotron-Content-Safety-Reasoning-4B is a Gemma 3)."""


def gguf_control_tokens(path: Any) -> list[str]:
    """Every control token of a GGUF file's vocabulary, in id order."""
    fields = GGUFReader(path).fields
    tokens, types = fields["tokenizer.ggml.tokens"], fields["tokenizer.ggml.token_type"]
    return [bytes(tokens.parts[t]).decode() for t, k in zip(tokens.data, types.data, strict=True)
            if int(types.parts[k][0]) == TokenType.CONTROL]


SMOLLM2 = gguf_control_tokens(default_gguf_path())
"""The embedded model's own control tokens (the main job's model, served by llama.cpp)."""
FAMILIES: dict[str, list[str]] = {"harmony": HARMONY, "llama3": LLAMA3, "llama4": LLAMA4,
                                  "chatml": CHATML, "granite": GRANITE, "gemma": GEMMA,
                                  "smollm2": SMOLLM2}
EVERY_TOKEN = sorted({token for tokens in FAMILIES.values() for token in tokens})

Path = tuple[Any, ...]
"""Where a string sits in a case's JSON: keys and list indexes, then ``"<key>"`` when the string
is a mapping key rather than a value."""
KEY = "<key>"
NOT_TEXT = {("policy", "format")}
"""Strings that are a fixed vocabulary, not text (``policy.format`` is text/openfga/cedar)."""
AUTHORED_MAPPINGS = (("request", "arguments"), ("request", "environment"), ("evidence", "state"),
                     ("effect", "params"))
"""The mappings whose keys a case author writes (at any depth below them)."""


def full_case() -> PublicCase:
    """An example case with every public field filled: documents with issuer and time, request
    arguments and environment, engine state (nested lists and mappings), a policy schema and an
    effect."""
    data = load_examples().cases[0].public.model_dump(mode="json")
    data["policy"]["schema_text"] = "entity User; entity Order;"
    data["evidence"]["documents"][0].update(issuer="finance lead Ana Ortiz",
                                            time="2026-03-01T09:00:00Z")
    data["evidence"]["state"] = {"tuples": [{"user": "user:ann", "relation": "viewer"}],
                                 "context": {"ip": "10.0.0.1"}}
    data["effect"] = data["effect"] or {"type": "ledger_transfer", "params": {"amount": 5}}
    return PublicCase.model_validate(data)


def text_paths(case: PublicCase) -> list[Path]:
    """The path of every public string of ``case`` (values and mapping keys), fixed
    vocabularies left out."""
    found: list[Path] = []

    def walk(value: Any, path: Path) -> None:
        if isinstance(value, str):
            if path not in NOT_TEXT:
                found.append(path)
        elif isinstance(value, dict):
            for key, item in value.items():
                if any(path[:len(m)] == m for m in AUTHORED_MAPPINGS):
                    found.append((*path, key, KEY))
                walk(item, (*path, key))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                walk(item, (*path, index))

    walk(case.model_dump(mode="json"), ())
    return found


def inject(case: PublicCase, path: Path, text: str, where: str = "inside") -> PublicCase:
    """``case`` with ``text`` put into the string at ``path``: ``inside`` it (between its two
    halves), before it, after it, or ``instead`` of it."""
    data = case.model_dump(mode="json")
    *parents, last = path[:-1] if path[-1] == KEY else path
    holder = data
    for step in parents:
        holder = holder[step]
    old = str(last) if path[-1] == KEY else holder[last]
    half = len(old) // 2
    new = {"inside": old[:half] + text + old[half:], "before": text + old,
           "after": old + text, "instead": text}[where]
    if path[-1] == KEY:
        holder[new] = holder.pop(last)
    else:
        holder[last] = new
    return PublicCase.model_validate(data)


def dotted(path: Path) -> str:
    """A path as the refusal names its field (``evidence.documents[0].text``; a mapping key
    as ``request.arguments (key)``)."""
    if path[-1] == KEY:
        return dotted(path[:-2]) + " (key)"
    return "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in path)[1:]
