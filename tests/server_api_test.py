#!/usr/bin/python3
"""toyllm serve driven by Python's requests, a client no one here wrote: each route, the
streamed and whole answers against `toyllm generate` with the same seed, `toyllm chat`
against /v1/chat/completions, hostile HTTP (answered 4xx, the server still serving), and a
bounded load of 64 concurrent streams on 4 slots (each equal to the same request alone,
every request answered 200 or 503; latency and throughput printed, not asserted).

usage: server_api_test.py TOYLLM_BINARY
Each server is started on a free port and always killed at the end.
"""
import concurrent.futures
import io
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import unittest

import numpy as np
import requests

TOYLLM = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("-") else "build/toyllm"
MODELS = os.environ.get("TOYLLM_MODELS") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../shared/models")
STORIES = ["-m", os.path.join(MODELS, "stories260K/stories260K.bin"), "--tokenizer", os.path.join(MODELS, "stories260K/tok512.model")]
PROMPT = "Once upon a time"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Serve:
    """A toyllm serve process on a free port, killed on exit."""

    def __init__(self, *args):
        self.port = free_port()
        self.proc = subprocess.Popen([TOYLLM, "serve", "--port", str(self.port), "-t", "1", *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if "listening on" not in line:
            self.proc.kill()
            raise RuntimeError(f"toyllm serve did not start: {line}{self.proc.stderr.read()}")
        self.url = f"http://127.0.0.1:{self.port}"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.proc.stdout.close()
        self.proc.stderr.close()

    def post(self, path, body, **kw):
        return requests.post(self.url + path, json=body, timeout=60, **kw)

    def stream(self, path, body):
        """The SSE events of a streamed request (without the final [DONE]) and whether it came."""
        events, done = [], False
        with requests.post(self.url + path, json={**body, "stream": True}, stream=True, timeout=120) as r:
            if r.status_code != 200:
                return r.status_code, [], False
            for line in r.iter_lines():
                if not line:
                    continue
                assert line.startswith(b"data: "), line
                data = line[len(b"data: "):]
                if data == b"[DONE]":
                    done = True
                    continue
                assert not done, "data after [DONE]"
                events.append(json.loads(data))
        return 200, events, done


def generate(model_args, prompt, n, seed, temp, top_p):
    """`toyllm generate`'s continuation: its output minus the echo of the prompt."""
    def run(count):
        return subprocess.run([TOYLLM, "generate", *model_args, "-p", prompt, "-n", str(count), "--seed", str(seed),
                               "--temp", str(temp), "--top-p", str(top_p), "-t", "1"],
                              check=True, capture_output=True, text=True).stdout
    echo = run(0)
    full = run(n)
    assert full.startswith(echo[:-1]) and full.endswith("\n")
    return full[len(echo) - 1:-1]


def streamed_text(events, key):
    return "".join(e["choices"][0][key].get("content", "") if key == "delta" else e["choices"][0]["text"]
                   for e in events if e.get("choices"))


class ApiTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.path.exists(STORIES[1]):
            raise unittest.SkipTest(f"*** SKIPPED: {STORIES[1]} is missing ***")
        cls.server = Serve(*STORIES, "-np", "2")

    @classmethod
    def tearDownClass(cls):
        cls.server.__exit__()

    def test_completion_equals_generate_with_the_same_seed(self):
        for seed, temp, top_p in [(7, 1.0, 0.9), (42, 0.8, 1.0), (3, 0.0, 1.0)]:
            want = generate(STORIES, PROMPT, 40, seed, temp, top_p)
            body = {"prompt": PROMPT, "max_tokens": 40, "seed": seed, "temperature": temp, "top_p": top_p}
            r = self.server.post("/v1/completions", body)
            self.assertEqual(r.status_code, 200, r.text)
            answer = r.json()
            self.assertEqual(answer["choices"][0]["text"], want)
            self.assertEqual(answer["object"], "text_completion")
            usage = answer["usage"]
            self.assertEqual(usage["total_tokens"], usage["prompt_tokens"] + usage["completion_tokens"])
            self.assertEqual(answer["choices"][0]["finish_reason"],
                             "length" if usage["completion_tokens"] == 40 else "stop")
            status, events, done = self.server.stream("/v1/completions", body)
            self.assertEqual(status, 200)
            self.assertTrue(done, "the stream must end with data: [DONE]")
            self.assertEqual(streamed_text(events, "text"), want)
            self.assertEqual(events[-1]["choices"][0]["finish_reason"], answer["choices"][0]["finish_reason"])
            self.assertEqual(events[-1]["usage"], usage)

    def test_chat_stream_equals_chat_whole_and_toyllm_chat(self):
        messages = [{"role": "user", "content": "Tell me about Lily."}]
        body = {"messages": messages, "max_tokens": 24, "temperature": 0}
        r = self.server.post("/v1/chat/completions", body)
        self.assertEqual(r.status_code, 200, r.text)
        whole = r.json()["choices"][0]["message"]
        self.assertEqual(whole["role"], "assistant")
        status, events, done = self.server.stream("/v1/chat/completions", body)
        self.assertTrue(done)
        self.assertEqual(streamed_text(events, "delta"), whole["content"])
        self.assertEqual(events[-1]["object"], "chat.completion.chunk")
        # toyllm chat renders the same template and runs the same completion code; the
        # plain template's stop string applies there, so compare up to it.
        out = subprocess.run([TOYLLM, "chat", *STORIES, "--temp", "0", "-n", "24", "-t", "1"],
                             input="Tell me about Lily.\n", capture_output=True, text=True, check=True).stdout
        reply = out.split("> ", 2)[1].rsplit("\n", 1)[0]
        self.assertEqual(reply, whole["content"].split("\nuser:")[0])

    def test_logprobs(self):
        body = {"prompt": PROMPT, "max_tokens": 6, "temperature": 0, "logprobs": 3}
        choice = self.server.post("/v1/completions", body).json()["choices"][0]
        lp = choice["logprobs"]
        self.assertEqual(len(lp["tokens"]), 6)
        for token, logprob, top in zip(lp["tokens"], lp["token_logprobs"], lp["top_logprobs"]):
            self.assertEqual(len(top), 3)
            best = max(top.values())
            self.assertLessEqual(best, 0.0)
            self.assertAlmostEqual(logprob, best, places=5)  # greedy picks the most likely
            self.assertAlmostEqual(top[token], logprob, places=5)
        self.assertEqual("".join(lp["tokens"]).strip(), choice["text"].strip())
        chat = self.server.post("/v1/chat/completions", {"messages": [{"role": "user", "content": "Hi"}],
                                                         "max_tokens": 3, "temperature": 0, "logprobs": True,
                                                         "top_logprobs": 2}).json()
        content = chat["choices"][0]["logprobs"]["content"]
        self.assertEqual(len(content), 3)
        self.assertEqual(content[0]["top_logprobs"][0]["token"], content[0]["token"])
        self.assertEqual(bytes(content[0]["bytes"]).decode(), content[0]["token"])

    def test_inspect_routes_agree(self):
        attention = self.server.post("/v1/inspect/attention", {"prompt": PROMPT}).json()
        t = attention["positions"]
        self.assertEqual(attention["token_ids"], self.server.post("/tokenize", {"content": PROMPT, "add_special": True}).json()["tokens"])
        for layer, head, q in [(0, 0, t - 1), (len(attention["layers"]) - 1, len(attention["heads"]) - 1, 2)]:
            row = attention["weights"][layer][head][q]
            self.assertAlmostEqual(sum(row), 1.0, places=5)
            self.assertTrue(all(w == 0 for w in row[q + 1:]))  # causal
            e = self.server.post("/v1/inspect/explain", {"prompt": PROMPT, "layer": layer, "head": head,
                                                         "position": q}).json()
            self.assertEqual(e["weights"], row[:q + 1])
            # softmax of the scaled scores, and Σ weight·v, recomputed here
            scores = e["scaled_scores"]
            exps = [pow(2.718281828459045, s - max(scores)) for s in scores]
            for w, x in zip(e["weights"], exps):
                self.assertAlmostEqual(w, x / sum(exps), places=5)
            for i, o in enumerate(e["out"]):
                self.assertAlmostEqual(o, sum(w * v[i] for w, v in zip(e["weights"], e["v"])), places=4)
        lens = self.server.post("/v1/inspect/lens", {"prompt": PROMPT, "position": t - 1, "top": 1}).json()
        final = lens["stages"][-1]["top"][0]["id"]
        greedy = self.server.post("/v1/completions", {"prompt": PROMPT, "max_tokens": 1, "temperature": 0,
                                                      "logprobs": 0}).json()["choices"][0]["logprobs"]["tokens"][0]
        self.assertEqual(lens["stages"][-1]["top"][0]["token"], greedy)  # the last stage is the real prediction
        self.assertGreaterEqual(final, 0)
        self.assert_error(self.server.post("/v1/inspect/explain", {"prompt": PROMPT, "layer": 99}), 400)
        self.assert_error(self.server.post("/v1/inspect/lens", {"prompt": PROMPT, "position": 999}), 400)

    def test_attention_as_npy_equals_toyllm_attention(self):
        with tempfile.TemporaryDirectory() as out:
            subprocess.run([TOYLLM, "attention", *STORIES, "-p", PROMPT, "-o", out, "-t", "1"], check=True,
                           capture_output=True)
            want = np.load(os.path.join(out, "attention.npy"))
        by_field = self.server.post("/v1/inspect/attention", {"prompt": PROMPT, "format": "npy"})
        by_accept = self.server.post("/v1/inspect/attention", {"prompt": PROMPT},
                                     headers={"Accept": "application/x-npy"})
        for r in (by_field, by_accept):
            self.assertEqual(r.status_code, 200)
            self.assertEqual(r.headers["Content-Type"], "application/x-npy")
            got = np.load(io.BytesIO(r.content))
            self.assertEqual(got.dtype, np.float32)
            self.assertEqual(got.shape, want.shape)
            np.testing.assert_array_equal(got, want)
        as_json = self.server.post("/v1/inspect/attention", {"prompt": PROMPT, "format": "json"}).json()
        np.testing.assert_array_equal(np.array(as_json["weights"], dtype=np.float32), want)
        self.assert_error(self.server.post("/v1/inspect/attention", {"prompt": PROMPT, "format": "csv"}), 400)
        self.assert_error(self.server.post("/v1/inspect/lens", {"prompt": PROMPT, "format": "npy"}), 400)

    def test_stop_strings_cut_the_text(self):
        body = {"prompt": PROMPT, "max_tokens": 40, "temperature": 0}
        text = self.server.post("/v1/completions", body).json()["choices"][0]["text"]
        stop = text[10:14]
        want = text[:text.index(stop)]
        r = self.server.post("/v1/completions", {**body, "stop": [stop, "never appears"]}).json()
        self.assertEqual(r["choices"][0]["text"], want)
        self.assertEqual(r["choices"][0]["finish_reason"], "stop")
        _, events, done = self.server.stream("/v1/completions", {**body, "stop": stop})
        self.assertTrue(done)
        self.assertEqual(streamed_text(events, "text"), want)

    def test_small_routes(self):
        ids = self.server.post("/tokenize", {"content": PROMPT}).json()["tokens"]
        self.assertGreater(len(ids), 1)
        self.assertEqual(self.server.post("/detokenize", {"tokens": ids}).json()["content"], PROMPT)
        models = requests.get(self.server.url + "/v1/models").json()
        self.assertEqual(models["object"], "list")
        self.assertEqual(models["data"][0]["id"], "stories260K.bin")
        self.assertEqual(requests.get(self.server.url + "/health").json()["status"], "ok")
        metrics = requests.get(self.server.url + "/metrics").text
        for name in ["toyllm_requests_total", "toyllm_generated_tokens_total", "toyllm_tokens_per_second",
                     "toyllm_queue_length"]:
            self.assertIn(f"\n{name} ", "\n" + metrics)

    def assert_error(self, response, status):
        self.assertEqual(response.status_code, status, response.text)
        error = response.json()["error"]
        self.assertIsInstance(error["message"], str)
        self.assertIn("type", error)
        self.assertIn("code", error)
        self.assertEqual(requests.get(self.server.url + "/health").status_code, 200)

    def test_hostile_requests(self):
        url = self.server.url + "/v1/completions"
        json_type = {"Content-Type": "application/json"}
        for raw in [b"{", b"", b"[1, 2]", b"null", b'{"prompt": "a"}}', b'{"prompt": "\xff\xfe"}',
                    b'{"prompt": "a", "max_tokens": 1e400}']:
            self.assert_error(requests.post(url, data=raw, headers=json_type), 400)
        self.assert_error(requests.post(url, data=b'{"prompt": "a"}', headers={"Content-Type": "text/plain"}), 400)
        self.assert_error(requests.post(url, data=b"x" * (1 << 20 + 1), headers=json_type), 413)
        for bad in [{"prompt": 5}, {"prompt": "a", "stream": "yes"}, {"prompt": "a", "temperature": 5},
                    {"prompt": "a", "temperature": "hot"}, {"prompt": "a", "top_p": 0}, {"prompt": "a", "top_k": -1},
                    {"prompt": "a", "seed": 0}, {"prompt": "a", "seed": 2 ** 70}, {"prompt": "a", "max_tokens": -1},
                    {"prompt": "a", "max_tokens": 1.5}, {"prompt": "a", "stop": [1]}, {"prompt": "a", "n": 2},
                    {"prompt": "a", "max_tokens": 100000}, {"prompt": "a " * 2000},
                    {"prompt": "a", "logprobs": 100}]:
            self.assert_error(self.server.post("/v1/completions", bad), 400)
        for bad in [{"messages": []}, {"messages": "hi"}, {"messages": [{"role": 1}]},
                    {"messages": [{"role": "user", "content": 3}]}]:
            self.assert_error(self.server.post("/v1/chat/completions", bad), 400)
        self.assert_error(self.server.post("/detokenize", {"tokens": [10 ** 9]}), 400)
        self.assert_error(requests.get(self.server.url + "/v1/nothing"), 404)
        r = self.server.post("/v1/completions", {"prompt": "a", "max_tokens": 1, "unknown_field": {"x": [1]}})
        self.assertEqual(r.status_code, 200, r.text)
        # A truncated body (fewer bytes than Content-Length) and a client that stops
        # mid-header: the server answers or drops them and keeps serving.
        for raw in [b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    b"Content-Length: 100\r\n\r\n{\"prompt\": ", b"POST /v1/compl"]:
            with socket.create_connection(("127.0.0.1", self.server.port)) as s:
                s.sendall(raw)
                self.assertEqual(requests.get(self.server.url + "/health").status_code, 200)
        # A stream whose client goes away is cancelled; the slot serves the next request.
        with requests.post(url, json={"prompt": PROMPT, "max_tokens": 400, "stream": True}, stream=True) as r:
            next(r.iter_lines())
        self.assertEqual(self.server.post("/v1/completions", {"prompt": "a", "max_tokens": 2}).status_code, 200)


class ApiKeyAndShutdownTest(unittest.TestCase):
    def test_api_key_and_sigterm(self):
        with Serve("--api-key", "sesame") as server:
            body = {"prompt": "a", "max_tokens": 1}
            self.assertEqual(server.post("/v1/completions", body).status_code, 401)
            self.assertEqual(server.post("/v1/completions", body, headers={"Authorization": "Bearer nope"}).status_code, 401)
            self.assertEqual(server.post("/v1/completions", body, headers={"Authorization": "Bearer sesame"}).status_code, 200)
            server.proc.terminate()
            self.assertEqual(server.proc.wait(timeout=30), 0)


class BusyPortTest(unittest.TestCase):
    def test_a_port_in_use_is_one_line_and_a_non_zero_exit(self):
        with Serve() as server:
            r = subprocess.run([TOYLLM, "serve", "--port", str(server.port), "-t", "1"],
                               capture_output=True, text=True, timeout=60)
            self.assertNotEqual(r.returncode, 0, r.stdout)
            self.assertEqual(r.stdout, "")
            self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
            self.assertIn(f"cannot listen on 127.0.0.1:{server.port}", r.stderr)


class LoadTest(unittest.TestCase):
    def test_64_streams_on_4_slots(self):
        if not os.path.exists(STORIES[1]):
            self.skipTest(f"*** SKIPPED: {STORIES[1]} is missing ***")
        requests_ = [{"prompt": p, "max_tokens": 48, "seed": s, "temperature": 0.9, "top_p": 0.95}
                     for p in ["Once upon a time", "Lily and Tom", "The dog"] for s in (1, 2, 3)]
        with Serve(*STORIES, "-np", "4", "--queue", "32") as server:
            alone = {}
            for i, body in enumerate(requests_):
                status, events, done = server.stream("/v1/completions", body)
                self.assertTrue(done)
                alone[i] = streamed_text(events, "text")

            def client(k):
                start = time.monotonic()
                status, events, done = server.stream("/v1/completions", requests_[k % len(requests_)])
                tokens = events[-1]["usage"]["completion_tokens"] if status == 200 else 0
                return k, status, streamed_text(events, "text"), done, time.monotonic() - start, tokens

            start = time.monotonic()
            with concurrent.futures.ThreadPoolExecutor(64) as pool:
                results = list(pool.map(client, range(64)))
            wall = time.monotonic() - start
            served = [r for r in results if r[1] == 200]
            for k, status, text, done, _, _ in results:
                self.assertIn(status, (200, 503))
                if status == 200:
                    self.assertTrue(done)
                    self.assertEqual(text, alone[k % len(requests_)], f"stream {k} differs from its request alone")
            self.assertGreater(len(served), 4)
            self.assertEqual(requests.get(server.url + "/health").status_code, 200)
            latencies = sorted(r[4] for r in served)
            tokens = sum(r[5] for r in served)
            print(f"\nload: 64 streaming clients, 4 slots: {len(served)} answered 200, {64 - len(served)} 503; "
                  f"latency p50 {latencies[len(latencies) // 2]:.3f} s, p99 {latencies[int(len(latencies) * 0.99)]:.3f} s; "
                  f"{tokens} tokens in {wall:.2f} s = {tokens / wall:.0f} tok/s aggregate", file=sys.stderr)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
