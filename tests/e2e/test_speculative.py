# Speculative decoding end to end: greedy output with the n-gram drafter and
# with a draft model equals plain greedy (alone and at concurrency 16);
# rejected drafts leave KV blocks and the prefix cache as plain decoding does;
# at temperature 1 the first three tokens follow the model's distribution
# exactly with sampled drafts (chi-square against the distribution computed
# from the model's logprobs, and the same test rejects a biased acceptance
# rule), a draft model drawing from the target's own distribution is always
# accepted, and point-mass drafts replay plain decoding's tokens for a seed;
# a draft model with another vocabulary is refused.
import concurrent.futures
import math
import pathlib
import subprocess
import sys

import httpx
import numpy as np
import pytest
from server_fixture import MODEL_ID, ServerProcess, metric, wait_until_idle

ROOT = pathlib.Path(__file__).resolve().parents[2]

PARAGRAPH = ("The old lighthouse stood on the northern cliff for two hundred years. Every night its keeper "
             "climbed the spiral stairs, trimmed the wick and watched the ships pass safely through the strait.")
CODE = ("def mean(values):\n    total = 0\n    for v in values:\n        total += v\n"
        "    return total / len(values)\n")
# Input-grounded prompts (the answer repeats the prompt: drafts get accepted)
# and open-ended ones (drafts mostly rejected): both paths of the verifier.
PROMPTS = [
    "Repeat this paragraph exactly:\n" + PARAGRAPH + "\nRepeated:\n",
    "Copy the code below.\n" + CODE + "\nCopy:\n",
    "Rewrite the paragraph with 'northern' replaced by 'southern'.\n" + PARAGRAPH + "\nRewritten:\n",
    "Quote the first sentence: " + PARAGRAPH + "\nQuote: \"",
    "The history of the Roman Empire",
    "List of fruits: apple, banana,",
    "In a distant galaxy, a lone starship",
    "1, 2, 3, 4, 5,",
]
MAX_TOKENS = 40


def complete(srv, prompt, max_draft=None, **extra):
    body = {"model": MODEL_ID, "prompt": prompt, "max_tokens": MAX_TOKENS, "temperature": 0, **extra}
    if max_draft is not None:
        body["speculative.n_max"] = max_draft
    r = httpx.post(srv.base_url + "/v1/completions", json=body, timeout=300)
    assert r.status_code == 200, r.text
    return r.json()


def texts(srv, prompts, max_draft=None, concurrent=False, **extra):
    run = lambda p: complete(srv, p, max_draft, **extra)["choices"][0]["text"]  # noqa: E731
    if not concurrent:
        return [run(p) for p in prompts]
    with concurrent_pool(len(prompts)) as pool:
        return list(pool.map(run, prompts))


def concurrent_pool(n):
    return concurrent.futures.ThreadPoolExecutor(n)


def spec_counts(srv, drafter):
    m = httpx.get(srv.base_url + "/metrics").text
    label = '{drafter="%s"}' % drafter
    return (metric(m, "tessera_spec_draft_tokens_total" + label),
            metric(m, "tessera_spec_accepted_tokens_total" + label))


@pytest.fixture(scope="module")
def ngram_server(tessera_bin, model_path):
    srv = ServerProcess(tessera_bin, model_path, ["--spec", "ngram", "--spec-max-batch", "16"])
    yield srv
    assert srv.stop() == 0, srv.final_log


def test_ngram_greedy_equals_plain_alone_and_at_concurrency_16(ngram_server):
    srv = ngram_server
    plain = texts(srv, PROMPTS, max_draft=0)  # this request speculates not at all
    assert spec_counts(srv, "ngram") == (0, 0)
    alone = texts(srv, PROMPTS)
    drafted, accepted = spec_counts(srv, "ngram")
    assert alone == plain
    # Drafts were verified, some accepted and some rejected (rolled back).
    assert drafted > 0 and 0 < accepted < drafted
    # 16 at once: the copy prompts twice, so some drafts share a batch with
    # prefills and other drafts.
    batch = PROMPTS * 2
    assert texts(srv, batch, concurrent=True) == plain * 2
    assert spec_counts(srv, "ngram")[0] > drafted
    # Acceptance histogram: one observation per verified draft.
    m = httpx.get(srv.base_url + "/metrics").text
    assert metric(m, 'tessera_spec_accepted_length_count{drafter="ngram"}') > 0


def test_per_request_draft_cap_is_validated(ngram_server):
    r = httpx.post(ngram_server.base_url + "/v1/completions", timeout=30,
                   json={"model": MODEL_ID, "prompt": "hi", "max_tokens": 2, "speculative.n_max": -1})
    assert r.status_code == 400
    assert "speculative.n_max" in r.text


def test_draft_model_greedy_equals_plain_at_concurrency_16(tessera_bin, model_path):
    # The target's own file as its draft: the drafts are the target's greedy
    # tokens, so nearly all are accepted, and output must not change. (A draft
    # as large as the target never pays, so --draft-min forces the drafts.)
    srv = ServerProcess(tessera_bin, model_path, ["--draft-model", model_path, "--spec-max-batch", "16",
                                                  "--draft-max", "6", "--draft-min", "4"])
    try:
        prompts = PROMPTS * 2
        plain = texts(srv, PROMPTS, max_draft=0)
        together = texts(srv, prompts, concurrent=True)
        drafted, accepted = spec_counts(srv, "draft_model")
    finally:
        assert srv.stop() == 0, srv.final_log
    assert together == plain * 2
    assert drafted > 100 and accepted >= 0.9 * drafted, (drafted, accepted)


def kv_state(srv):
    assert wait_until_idle(srv)
    m = httpx.get(srv.base_url + "/metrics").text
    return metric(m, "tessera_kv_blocks_used"), metric(m, "tessera_kv_blocks_cached")


def test_rejected_drafts_leave_blocks_and_prefix_cache_as_plain_decoding(tessera_bin, model_path):
    # The same requests, one at a time, on a plain server and a speculating
    # one: after each, the same blocks are in use and cached. Stops and odd
    # max_tokens end choices in the middle of a verified draft.
    servers = [ServerProcess(tessera_bin, model_path, []),
               ServerProcess(tessera_bin, model_path, ["--spec", "ngram", "--draft-max", "8", "--draft-min", "1"])]
    try:
        runs = [(p, {"max_tokens": n, "stop": stop}) for p, n, stop in [
            (PROMPTS[0], 37, []), (PROMPTS[1], 29, ["len("]), (PROMPTS[2], 33, ["ships"]), (PROMPTS[4], 21, [])]]
        outputs = [[], []]
        for prompt, extra in runs:
            states = []
            for srv, out in zip(servers, outputs):
                out.append(complete(srv, prompt, **extra)["choices"][0]["text"])
                states.append(kv_state(srv))
            assert states[0] == states[1], (prompt[:30], states)
        assert outputs[0] == outputs[1]
        assert spec_counts(servers[1], "ngram")[1] > 0
        # A follow-up that extends each earlier exchange finds the same cached
        # prefix and continues identically.
        for (prompt, _), text in zip(runs, outputs[0]):
            follow = [complete(srv, prompt + text + "\nAgain:", max_tokens=12) for srv in servers]
            cached = [f["usage"]["prompt_tokens_details"]["cached_tokens"] for f in follow]
            assert cached[0] == cached[1] and cached[0] >= 16, cached
            assert follow[0]["choices"][0]["text"] == follow[1]["choices"][0]["text"]
    finally:
        for srv in servers:
            assert srv.stop() == 0, srv.final_log


# ---------------------------------------------------------------- distribution

TINY_VOCAB = 300   # tools/make_tiny_model.py
TOP_K = 4
N_SAMPLES = 20000
N_PER_REQUEST = 16


def chi2_sf(x, df):
    """P(X >= x) for X ~ chi-square(df): the regularised upper incomplete
    gamma Q(df/2, x/2), by its series below a + 1 and its continued fraction
    above (no SciPy in the test environment)."""
    a, z = df / 2.0, x / 2.0
    if z <= 0:
        return 1.0
    log_front = a * math.log(z) - z - math.lgamma(a)
    if z < a + 1:
        term = total = 1.0 / a
        k = a
        while abs(term) > 1e-15 * abs(total):
            k += 1
            term *= z / k
            total += term
        return 1.0 - total * math.exp(log_front)
    # Lentz's method for the continued fraction of Q.
    tiny = 1e-300
    b = z + 1 - a
    c = 1 / tiny
    d = 1 / b
    h = d
    for i in range(1, 10000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-15:
            break
    return math.exp(log_front) * h


def chi2_p_value(counts, probs):
    """Goodness of fit of observed counts to probabilities; cells expected
    fewer than 5 times pooled into one."""
    n = sum(counts.values())
    obs, exp, rest_obs, rest_exp = [], [], 0, 0.0
    for cell, p in probs.items():
        if n * p >= 5:
            obs.append(counts.get(cell, 0))
            exp.append(n * p)
        else:
            rest_obs += counts.get(cell, 0)
            rest_exp += n * p
    rest_obs += sum(c for cell, c in counts.items() if cell not in probs)
    if rest_exp > 0 or rest_obs > 0:
        obs.append(rest_obs)
        exp.append(max(rest_exp, 1e-12))
    stat = sum((o - e) ** 2 / e for o, e in zip(obs, exp))
    return chi2_sf(stat, len(obs) - 1)


def ids_of(choice):
    return tuple(int(t.split(":")[1]) for t in choice["logprobs"]["tokens"])


def top_k_probs(srv, prompt):
    """The sampling chain's distribution at the next position (temperature
    1, top-k 4): the top 4 logprobs, renormalised."""
    r = httpx.post(srv.base_url + "/v1/completions", timeout=60, json={
        "model": MODEL_ID, "prompt": prompt, "max_tokens": 1, "temperature": 0, "logprobs": TOP_K,
        "return_tokens_as_token_ids": True, "speculative.n_max": 0})
    assert r.status_code == 200, r.text
    top = r.json()["choices"][0]["logprobs"]["top_logprobs"][0]
    assert len(top) == TOP_K
    weights = {int(k.split(":")[1]): math.exp(v) for k, v in top.items()}
    total = sum(weights.values())
    return {t: w / total for t, w in weights.items()}


def exact_joint(cond):
    """P(t1, t2, t3) of the first three sampled tokens, from the next-token
    distribution after each prefix of generated tokens."""
    joint = {}
    for t1, p1 in cond(()).items():
        for t2, p2 in cond((t1,)).items():
            for t3, p3 in cond((t1, t2)).items():
                joint[(t1, t2, t3)] = p1 * p2 * p3
    return joint


def samples(srv, prompt, seeds, max_draft=None):
    def one(seed):
        body = {"model": MODEL_ID, "prompt": prompt, "max_tokens": 3, "temperature": 1.0, "top_k": TOP_K,
                "top_p": 1.0, "min_p": 0.0, "n": N_PER_REQUEST, "seed": seed, "ignore_eos": True,
                "logprobs": 0, "return_tokens_as_token_ids": True}
        if max_draft is not None:
            body["speculative.n_max"] = max_draft
        r = httpx.post(srv.base_url + "/v1/completions", json=body, timeout=120)
        assert r.status_code == 200, r.text
        return [ids_of(c) for c in sorted(r.json()["choices"], key=lambda c: c["index"])]
    with concurrent_pool(4) as pool:
        return list(pool.map(one, seeds))


def biased_samples(joint_cond, prompt, n, rng):
    """What a wrong acceptance rule produces: one time in four the (greedy)
    draft token is taken without verification."""
    out = []
    for _ in range(n):
        ids = list(prompt)
        for _pos in range(3):
            q = joint_cond(tuple(ids[len(prompt):]))
            tokens, probs = zip(*q.items())
            if rng.random() < 0.25:
                ids.append(max(q, key=q.get))
            else:
                ids.append(tokens[rng.choice(len(tokens), p=np.array(probs))])
        out.append(tuple(ids[len(prompt):]))
    return out


def tiny_model(tmp_path, wtype="F32"):
    path = tmp_path / f"tiny-{wtype}.gguf"
    subprocess.run([sys.executable, str(ROOT / "tools" / "make_tiny_model.py"), "--out", str(path),
                    "--variant", "gqa", "--wtype", wtype], check=True)
    return path


def test_temperature_one_distribution_is_exact(tessera_bin, tmp_path):
    model = tiny_model(tmp_path)
    # The same weights in Q4_0 draft (forced: --draft-min): their tokens are
    # sampled from a q near the target's p, not equal to it, so the rule both
    # accepts (about 2 in 3) and rejects-and-redraws often.
    srv = ServerProcess(tessera_bin, str(model), ["--draft-model", str(tiny_model(tmp_path, "Q4_0")), "--draft-max", "2",
                                                  "--draft-min", "2", "--spec-max-batch", "256", "--ctx-size", "8192"])
    try:
        prompt = [(17 * j + 5) % (TINY_VOCAB - 1) for j in range(12)]
        cond_cache = {}

        def cond(prefix):
            if prefix not in cond_cache:
                cond_cache[prefix] = top_k_probs(srv, prompt + list(prefix))
            return cond_cache[prefix]

        joint = exact_joint(cond)  # fills cond_cache with every prefix biased_samples needs
        assert abs(sum(joint.values()) - 1.0) < 1e-6
        # Choice i of a request samples with seed + i: requests 16 apart never share one.
        seeds = range(0, N_SAMPLES, N_PER_REQUEST)
        spec = samples(srv, prompt, seeds)
        drafted, accepted = spec_counts(srv, "draft_model")
    finally:
        assert srv.stop() == 0, srv.final_log
    assert drafted >= N_SAMPLES and 0.1 * drafted < accepted < 0.9 * drafted, (drafted, accepted)
    counts = {}
    for request in spec:
        for s in request:
            counts[s] = counts.get(s, 0) + 1
    assert sum(counts.values()) == N_SAMPLES
    p_spec = chi2_p_value(counts, joint)
    assert p_spec > 0.01, p_spec
    # The test has the power to see a biased acceptance rule.
    rng = np.random.default_rng(1)
    biased = {}
    for s in biased_samples(cond, prompt, N_SAMPLES, rng):
        biased[s] = biased.get(s, 0) + 1
    p_biased = chi2_p_value(biased, joint)
    assert p_biased < 0.01, p_biased


def test_a_draft_model_sampling_the_targets_distribution_is_always_accepted(tessera_bin, tmp_path):
    # Drafting for itself at temperature 1, the draft model draws from q = p:
    # min(1, p/q) accepts every draft (greedy point-mass drafts would keep
    # only those the target's sample happens to equal).
    model = tiny_model(tmp_path)
    srv = ServerProcess(tessera_bin, str(model), ["--draft-model", str(model), "--draft-max", "4", "--draft-min", "4",
                                                  "--spec-max-batch", "256"])
    try:
        prompt = [(17 * j + 5) % (TINY_VOCAB - 1) for j in range(12)]
        samples(srv, prompt, range(0, 4 * N_PER_REQUEST, N_PER_REQUEST))
        drafted, accepted = spec_counts(srv, "draft_model")
    finally:
        assert srv.stop() == 0, srv.final_log
    # Not exactly all: the draft side's logits come from other batch shapes
    # (last-bit rounding), and a choice's last draft may pass max_tokens.
    assert drafted >= 4 * N_PER_REQUEST and accepted >= 0.98 * drafted, (drafted, accepted)


def test_point_mass_drafts_replay_plain_decodings_tokens_for_a_seed(ngram_server):
    # n-gram drafts are point masses: the verifier samples each row as plain
    # decoding does, with the same random numbers, so a seed gives the same
    # text with and without speculation.
    extra = {"temperature": 0.5, "seed": 42, "top_k": 0, "top_p": 1.0, "min_p": 0.0}  # near the prompt: drafts
    before = spec_counts(ngram_server, "ngram")[0]
    spec = complete(ngram_server, PROMPTS[0], **extra)["choices"][0]["text"]
    assert spec_counts(ngram_server, "ngram")[0] > before  # drafts were made
    assert spec == complete(ngram_server, PROMPTS[0], max_draft=0, **extra)["choices"][0]["text"]


def test_chi2_sf_matches_known_quantiles():
    # Table values: chi-square upper quantiles.
    assert chi2_sf(3.841, 1) == pytest.approx(0.05, abs=2e-4)
    assert chi2_sf(18.307, 10) == pytest.approx(0.05, abs=2e-4)
    assert chi2_sf(43.773, 30) == pytest.approx(0.05, abs=2e-4)
    assert chi2_sf(37.566, 20) == pytest.approx(0.01, abs=2e-4)


def test_draft_model_with_another_vocabulary_is_refused(tessera_bin, model_path, tmp_path):
    tiny = tmp_path / "tiny.gguf"
    subprocess.run([sys.executable, str(ROOT / "tools" / "make_tiny_model.py"), "--out", str(tiny),
                    "--variant", "gqa", "--wtype", "F32"], check=True)
    for cmd in (["run", "-m", model_path, "-p", "Hello", "-n", "4"],
                ["serve", "-m", model_path, "--port", "0"]):
        r = subprocess.run([tessera_bin, *cmd, "--draft-model", str(tiny)], capture_output=True, text=True,
                           timeout=120)
        assert r.returncode != 0, cmd
        assert "vocabulary differs" in r.stderr and "300 tokens" in r.stderr, r.stderr
