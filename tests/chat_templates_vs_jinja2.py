#!/usr/bin/python3
"""Every chat template in ../shared/chat-templates rendered by the project's interpreter
(tests/chat_template_render) and by Debian's python3-jinja2, in the environment Hugging
Face's apply_chat_template uses, on the same conversations: the texts must be identical,
and where Jinja2 raises (a template refusing a conversation) ours must fail too. Then
integer arithmetic at the edges of int64, where Python's ints grow and ours must not wrap:
every result that fits is Jinja2's, every one that does not is an error.

usage: chat_templates_vs_jinja2.py RENDER_BINARY
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import jinja2

TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city <now> & 'later'",
    "parameters": {"type": "object", "properties": {
        "city": {"type": "string", "description": "城市"},
        "days": {"type": "integer", "enum": [1, 2, 3]}}, "required": ["city"]}}}]

CONVERSATIONS = [
    [{"role": "user", "content": "Hello"}],
    [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Why is the sky blue?"}],
    [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello! How can I help?"},
     {"role": "user", "content": "  Tell me a story.\n\nShort, please.  "}],
    [{"role": "system", "content": "Answer in Chinese."},
     {"role": "user", "content": "这个动物并没有过马路，因为它太累了。它指的是"},
     {"role": "assistant", "content": "动物。"}, {"role": "user", "content": "And \"它\" if 累 → 宽?"}],
    [{"role": "user", "content": "What's the weather in Paris?"},
     {"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "type": "function", "function": {
         "name": "get_weather", "arguments": {"city": "Paris", "days": 2}}}]},
     {"role": "tool", "tool_call_id": "call_1", "name": "get_weather", "content": "{\"sunny\": true}"},
     {"role": "user", "content": "Thanks"}],
]


def variable_sets():
    for messages in CONVERSATIONS:
        for add_generation_prompt in (True, False):
            yield {"messages": messages, "add_generation_prompt": add_generation_prompt,
                   "bos_token": "<s>", "eos_token": "</s>"}
    yield {"messages": CONVERSATIONS[0], "tools": TOOLS, "add_generation_prompt": True,
           "bos_token": "<s>", "eos_token": "</s>"}
    yield {"messages": CONVERSATIONS[4], "tools": TOOLS, "add_generation_prompt": True,
           "bos_token": "<s>", "eos_token": "</s>"}


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def reference(source, variables):
    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
    env.globals["raise_exception"] = raise_exception
    try:
        return {"text": env.from_string(source).render(**variables)}
    except Exception as e:  # the template refused this conversation
        return {"error": f"{type(e).__name__}: {e}"}


INT64 = (-2**63, 2**63 - 1)
EDGES = [0, 1, -1, 2, -3, 7, 3037000499, 3037000500, -3037000500, 2**62, -2**62,
         2**63 - 1, -2**63, -2**63 + 1, 2777777777777777777]
BINARY = ["{{ a + b }}", "{{ a - b }}", "{{ a * b }}", "{{ a // b }}", "{{ a % b }}",
          "{{ a ** (b % 70) }}", "{{ -a }}", "{{ a | abs }}", "{{ [a, b] | sum }}",
          "{{ a is divisibleby(b) }}", "{{ a is odd }}", "{{ (a / 3) | int }}",
          "{{ 'abcdefgh'[a:b:3] }}", "{{ 'abcdefgh'[1::a] }}", "{{ range(a, b, 2**62) | list }}",
          "{{ range(b, a, -(2**62)) | list }}"]
# A string or list repeated: the variable that counts, too large past a thousand.
REPEATS = {"{{ 'xy' * a }}": "a", "{{ [1] * b }}": "b"}


def render_all(render, source, cases):
    with tempfile.NamedTemporaryFile("w", suffix=".jinja") as t, \
         tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        t.write(source)
        t.flush()
        json.dump(cases, f)
        f.flush()
        return json.loads(subprocess.run([render, t.name, f.name], check=True, capture_output=True).stdout)


def check_integers(render):
    cases = [{"a": a, "b": b} for a in EDGES for b in EDGES]
    failures = 0
    for source in BINARY + list(REPEATS):
        for vars_, got in zip(cases, render_all(render, source, cases)):
            try:
                if source in REPEATS and vars_[REPEATS[source]] > 1000:  # Python would allocate it
                    raise MemoryError
                want = jinja2.Environment().from_string(source).render(**vars_)
                fits = all(INT64[0] <= int(x) <= INT64[1] for x in re.findall(r"-?\d+", want))
            except (ArithmeticError, ValueError, MemoryError):
                want, fits = None, False
            if fits and got.get("text") != want:
                failures += 1
                print(f"FAIL {source} with {vars_}: jinja2 {want!r}, toyllm {got}")
            elif not fits and "error" not in got:
                failures += 1
                print(f"FAIL {source} with {vars_}: beyond int64 in Python, yet toyllm rendered {got}")
    print(f"{'ok  ' if not failures else 'FAIL'} integers: {len(BINARY) + len(REPEATS)} expressions on {len(cases)} int64 edge pairs")
    return failures


def main():
    render = sys.argv[1]
    if check_integers(render):
        return 1
    models = os.environ.get("TOYLLM_MODELS") or os.path.join(os.path.dirname(__file__), "../../shared/models")
    folder = os.path.join(models, "..", "chat-templates")
    names = sorted(n for n in os.listdir(folder) if n.endswith(".jinja")) if os.path.isdir(folder) else []
    if not names:
        print(f"*** SKIPPED: no chat templates in {folder} ***")
        return 1 if os.environ.get("TOYLLM_REQUIRE_MODELS") == "1" else 0
    cases = list(variable_sets())
    failures = 0
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        json.dump(cases, f, ensure_ascii=False)
        f.flush()
        for name in names:
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8") as t:
                source = t.read()
            ours = json.loads(subprocess.run([render, path, f.name], check=True, capture_output=True).stdout)
            rendered = 0
            for i, (vars_, got) in enumerate(zip(cases, ours)):
                want = reference(source, vars_)
                if "load_error" in got:
                    print(f"FAIL {name}: not loaded: {got['load_error']}")
                    failures += 1
                    break
                if "text" in want and got.get("text") != want["text"]:
                    failures += 1
                    print(f"FAIL {name} case {i}: differs\n--- jinja2\n{want['text']!r}\n--- toyllm\n"
                          f"{got.get('text', got.get('error'))!r}")
                elif "error" in want and "error" not in got:
                    failures += 1
                    print(f"FAIL {name} case {i}: jinja2 raised ({want['error']}) but toyllm rendered")
                else:
                    rendered += "text" in want
            else:
                print(f"ok   {name}: {rendered} renders identical, {len(cases) - rendered} refused by both")
    print(f"{len(names)} templates, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
