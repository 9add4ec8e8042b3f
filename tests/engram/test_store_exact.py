"""The store's search is exact: its rankings are the brute-force float32 order, ties by fact text then id, whether
one query is asked or many together, and a store reopened from disk ranks as the one that wrote it."""

from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engram import Engram, Fact, Flags, InvalidInput
from engram._store import _BLOCK, BATCH_MIN_ROWS, Store, _near_top
from engram.deciders import ScriptedDecider
from engram.testing import HashEmbedder

START = datetime(2023, 5, 1, 9, 0)


def fact(i: int, text: str, closed: bool = False) -> Fact:
    when = START + timedelta(minutes=i)
    return Fact(
        id=f"m{i}#0",
        text=text,
        subject="user",
        predicate="hobby",
        object="unspecified",
        kind="bio",
        durability="long_term",
        sensitivity="none",
        temporal_status="current",
        valid_from=when,
        valid_until=when if closed else None,
        belief=0.9,
        tentative=False,
        confidence=0.9,
        closed_reason="superseded" if closed else None,
        closed_by=None,
        source_message_id=f"m{i}",
        source_text=text,
        said_at=when,
        seq=i + 1,
    )


def filled(path, vectors: np.ndarray, texts: list[str], closed: list[bool]) -> Store:
    store = Store(path, vectors.shape[1])
    with store.transaction():
        store.add_facts([fact(i, t, c) for i, (t, c) in enumerate(zip(texts, closed))], vectors)
    return store


def brute_force(vectors: np.ndarray, texts: list[str], query: np.ndarray, k: int, allowed: list[bool]) -> list[str]:
    """Every row scored, the allowed ones sorted by (-score, text, id): the order the store must give."""
    scores = vectors @ query
    rows = [r for r in range(len(texts)) if allowed[r]]
    rows.sort(key=lambda r: (-float(scores[r]), texts[r], f"m{r}#0"))
    return [f"m{r}#0" for r in rows[:k]]


def assert_agrees_with_exact_scores(rows: list[int], exact: np.ndarray, k: int) -> None:
    """The rows are the k best by the exact (float64) scores, in their order, except that two scores closer than
    float32's rounding error of a 384-term sum may come either way (float32 sums themselves disagree there)."""
    margin = 2 * 384 * 2.0**-24
    kth = np.sort(exact)[-k]
    assert len(rows) == k
    assert all(exact[r] >= kth - margin for r in rows)
    assert all(exact[a] >= exact[b] - margin for a, b in zip(rows, rows[1:]))
    assert {r for r in range(len(exact)) if exact[r] > kth + margin} <= set(rows)


small_ints = st.integers(min_value=-2, max_value=2)


@settings(max_examples=60, deadline=None)
@given(
    data=st.data(),
    n=st.integers(min_value=1, max_value=60),
    k=st.integers(min_value=1, max_value=70),
    candidates_only=st.booleans(),
)
def test_rankings_follow_the_brute_force_order_with_ties_by_text(tmp_path_factory, data, n, k, candidates_only):
    # Small integer vectors make every score exact and produce many ties, so the tie-break is exercised.
    dim = 6
    vectors = np.array(data.draw(st.lists(st.lists(small_ints, min_size=dim, max_size=dim), min_size=n, max_size=n)))
    vectors = vectors.astype(np.float32)
    texts = data.draw(st.lists(st.sampled_from(["Ana hikes", "Ana cooks", "Ben hikes"]), min_size=n, max_size=n))
    closed = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    query = np.array(data.draw(st.lists(small_ints, min_size=dim, max_size=dim)), dtype=np.float32)
    store = filled(tmp_path_factory.mktemp("exact") / "e.db", vectors, texts, closed)

    allowed = [not c for c in closed] if candidates_only else [True] * n
    got = [i for i, _ in store.top(store.scores(query), k, candidates_only=candidates_only)]
    assert got == brute_force(vectors, texts, query, k, allowed)

    store.close_db()
    reopened = Store(store.path, dim)
    assert [i for i, _ in reopened.top(reopened.scores(query), k, candidates_only=candidates_only)] == got


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(min_value=0, max_value=2**32 - 1),
    blocks=st.integers(min_value=1, max_value=80),
    k=st.integers(min_value=1, max_value=60),
    levels=st.integers(min_value=1, max_value=50),
    masked_share=st.sampled_from([0.0, 0.5, 0.99, 1.0]),
    margin=st.sampled_from([0.0, 1e-6, 0.5]),
)
def test_the_few_positions_searched_hold_every_one_near_the_kth(seed, blocks, k, levels, masked_share, margin):
    # Few distinct values (many ties), masked rows at -inf and a ragged tail: every position whose value is at least
    # the k-th largest minus the margin must be among the positions the k best are then picked from.
    rng = np.random.default_rng(seed)
    n = blocks * _BLOCK + int(rng.integers(_BLOCK))
    values = (rng.integers(levels, size=n) / levels).astype(np.float32)
    values[rng.random(n) < masked_share] = -np.inf
    k = min(k, n - 1)
    kth = np.partition(values, n - k)[n - k]
    near = _near_top(values, k, margin)
    assert np.all(np.diff(near) > 0)
    assert set(np.flatnonzero(values >= kth - margin)) <= set(near)


def test_rankings_over_many_facts_follow_the_brute_force_order(tmp_path):
    # Enough facts for the k best to be picked from the blocks' maxima first; small integer vectors make scores
    # exact with many ties, some facts are closed, and some are left out as a message's own facts are.
    rng = np.random.default_rng(7)
    n, dim = 40 * _BLOCK + 17, 6
    vectors = rng.integers(-2, 3, size=(n, dim)).astype(np.float32)
    texts = [["Ana hikes", "Ana cooks", "Ben hikes"][i % 3] for i in range(n)]
    closed = list(rng.random(n) < 0.3)
    store = filled(tmp_path / "e.db", vectors, texts, closed)
    for trial in range(6):
        query = rng.integers(-2, 3, size=dim).astype(np.float32)
        scores = store.scores(query)
        for k in (1, 10, 30):
            for candidates_only in (False, True):
                allowed = [not c for c in closed] if candidates_only else [True] * n
                got = [i for i, _ in store.top(scores, k, candidates_only=candidates_only)]
                assert got == brute_force(vectors, texts, query, k, allowed)
        rows = np.arange(trial, n, 3)
        expected = sorted(rows, key=lambda r: (-float(scores[r]), texts[r], f"m{r}#0"))[:10]
        assert store.top_among(scores, [f"m{r}#0" for r in rows], 10) == [f"m{r}#0" for r in expected]


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**32 - 1), near_ties=st.integers(min_value=0, max_value=40))
def test_questions_asked_together_rank_exactly_as_one_by_one(tmp_path_factory, seed, near_ties):
    # Enough facts for the batched matrix product to be used; some rows are copies nudged by one float32 step, so
    # scores meet at the last bit, where a matrix product and a matrix-vector pass can disagree. Asked together,
    # the answers must be exactly those of one by one (ids and scores); both must be the brute-force order.
    rng = np.random.default_rng(seed)
    n, dim = BATCH_MIN_ROWS + 500, 384
    vectors = rng.standard_normal((n, dim), dtype=np.float32)
    queries = rng.standard_normal((12, dim), dtype=np.float32)
    for j in range(near_ties):
        target = rng.integers(n)
        vectors[target] = queries[j % len(queries)] + rng.standard_normal(dim, dtype=np.float32) * 1e-3
        vectors[(target + 1) % n] = np.nextafter(vectors[target], np.float32(np.inf))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    texts = [f"fact {i % 97}" for i in range(n)]
    store = filled(tmp_path_factory.mktemp("batch") / "e.db", vectors, texts, [False] * n)

    together = store.scores_many(queries)
    for j, query in enumerate(queries):
        alone = store.scores(query)
        store.make_exact(together[j], query, 30)
        assert store.top(together[j], 30) == store.top(alone, 30)  # the same ids and the same scores
        exact = vectors.astype(np.float64) @ query.astype(np.float64)
        assert_agrees_with_exact_scores([int(i[1:-2]) for i, _ in store.top(alone, 30)], exact, 30)


def test_a_checkpoint_asks_all_its_questions_at_once_and_gets_the_answers_of_one_by_one(tmp_path):
    memory = Engram(
        tmp_path / "e.db",
        extractor=_Sentences(),
        decider=ScriptedDecider(),
        embedder=HashEmbedder(),
        flags=Flags(retrieval_rerank=False),
    )
    said = [
        "I moved to Lisbon in spring",
        "My sister Ana plays the cello",
        "I adopted a grey cat called Miso",
        "Work at the bakery starts at six",
        "Ana's cello teacher lives in Porto",
    ]
    for n, text in enumerate(said):
        memory.add(text, speaker="Maria", when=START + timedelta(days=n))
    checkpoint = ["Where does Maria live?", "What does Ana play?", "what is the cat called", "when does work start"]

    together = memory.search_many(checkpoint, k=3)
    assert together == [memory.search(q, k=3) for q in checkpoint]
    assert [r.lines for r in memory.retrieve_many(checkpoint)] == [memory.retrieve(q).lines for q in checkpoint]
    assert memory.search_many([], k=3) == []


class _Sentences:
    name, model = "sentences", "test"

    def extract(self, message, context):
        from engram import ExtractedFact, Extraction

        return Extraction(facts=[ExtractedFact(text=message.text, subject=message.speaker)])


def test_vectors_of_a_message_that_never_committed_are_ignored_and_overwritten(tmp_path):
    class Crash(Exception):
        pass

    def memory() -> Engram:
        return Engram(tmp_path / "e.db", extractor=_Sentences(), decider=ScriptedDecider(), embedder=HashEmbedder())

    first = memory()
    first.add("Ana plays the cello", speaker="Ana", when=START)
    original = first._store._db

    class DiesAtCommit:  # the message's vectors reach the file, then the process dies before COMMIT
        def __getattr__(self, name):
            return getattr(original, name)

        def execute(self, sql, *args):
            if sql == "COMMIT":
                raise Crash()
            return original.execute(sql, *args)

    first._store._db = DiesAtCommit()
    with pytest.raises(Crash):
        first.add("Ana moved to Porto", speaker="Ana", when=START + timedelta(days=1))
    first.close()
    assert (tmp_path / "e.db.vectors").stat().st_size == 2 * 4 * HashEmbedder().dim  # the lost message's row

    reopened = memory()
    assert [f.text for f in reopened.facts()] == ["Ana plays the cello"]
    reopened.add("Ana adopted a cat", speaker="Ana", when=START + timedelta(days=2))
    again = memory()
    assert [f.text for f in again.facts()] == ["Ana plays the cello", "Ana adopted a cat"]
    cat = HashEmbedder().embed(["Ana adopted a cat"])[0]
    assert again.search("Ana adopted a cat", k=1)[0].score == pytest.approx(1.0)  # its own vector, not the lost one
    assert np.array_equal(again._store._matrix[1], cat)


def test_a_store_whose_vectors_file_lost_rows_refuses_to_open(tmp_path):
    memory = Engram(tmp_path / "e.db", extractor=_Sentences(), decider=ScriptedDecider(), embedder=HashEmbedder())
    memory.add("Ana plays the cello", speaker="Ana", when=START)
    memory.add("Ana moved to Porto", speaker="Ana", when=START + timedelta(days=1))
    memory.close()
    vectors = tmp_path / "e.db.vectors"
    vectors.write_bytes(vectors.read_bytes()[: 4 * HashEmbedder().dim])
    with pytest.raises(InvalidInput, match=r"e\.db\.vectors: holds 1 vectors; expected one per stored fact, 2"):
        Engram(tmp_path / "e.db", extractor=_Sentences(), decider=ScriptedDecider(), embedder=HashEmbedder())


def test_scores_taken_earlier_are_brought_up_to_date_exactly(tmp_path):
    # Scores over the store as it was, then facts added and vectors rewritten: only those rows are scored again,
    # and the result is, to the bit, the pass over the store as it is now.
    rng = np.random.default_rng(3)
    n, dim = 3000, 384
    vectors = rng.standard_normal((n + 40, dim), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    texts = [f"fact {i}" for i in range(n + 40)]
    store = filled(tmp_path / "e.db", vectors[:n], texts[:n], [False] * n)
    store.rewrite("m5#0", "fact 5 again", vectors[n + 39])
    query = rng.standard_normal(dim, dtype=np.float32)
    rewrites = store.rewrite_count()
    earlier = store.scores(query)
    with store.transaction():
        store.add_facts([fact(i, texts[i]) for i in range(n, n + 30)], vectors[n : n + 30])
        store.rewrite("m7#0", "fact 7 again", vectors[n + 38])
        store.rewrite("m2999#0", "fact 2999 again", vectors[n + 37])
        store.rewrite("m3010#0", "fact 3010 again", vectors[n + 36])
    assert np.array_equal(store.rescore(earlier, query, rewrites), store.scores(query))
    assert not np.array_equal(earlier, store.scores(query)[:n])  # rows 7 and 2999 did change


def test_messages_added_together_leave_the_store_that_adding_them_one_by_one_leaves(tmp_path):
    # An extractor that reads the similar facts, over a store large enough for the sweep to run in blocks: with
    # add_many each message's search for them is scored during the previous message's fact pass, and everything
    # (what extraction saw, the reports, every table, the vectors file) must be as with add, one by one.
    import sqlite3

    from engram import Message
    from tests.engram.conftest import SentenceExtractor, day

    class ReadsSimilarFacts(SentenceExtractor):
        def extract(self, message, context):
            self.seen.append((list(context.previous), list(context.similar_facts)))
            return super().extract(message, context)

    topics = ["jazz", "Porto", "the cello", "chess", "a red bike", "Rome", "hiking"]
    seeds = [f"Ana mentioned {topics[i % 7]} in note {i % 50}" for i in range(2500)]
    messages = [
        Message(f"d{t}", f"Ana likes {topics[t % 7]}. Ana moved to {topics[(t * 3) % 7]} in note {t}.", "Ana", day(t))
        for t in range(12)
    ] + [Message("empty", "", "Ana", day(13)), Message("d13", f"Ana talked about {topics[2]}.", "Ana", day(14))]

    def run(together: bool):
        decider = ScriptedDecider()
        decider.on("relation_to_candidate", {"refinement": 0.9}, new="likes")
        extractor = ReadsSimilarFacts()
        extractor.seen = []
        path = tmp_path / ("together.db" if together else "alone.db")
        memory = Engram(path, extractor=extractor, decider=decider, embedder=HashEmbedder())
        with memory._store.transaction():
            memory._store.add_facts([fact(i, t) for i, t in enumerate(seeds)], HashEmbedder().embed(seeds))
        if together:
            reports = memory.add_many(messages)
        else:
            reports = [memory.add(m.text, speaker=m.speaker, when=m.when, message_id=m.id) for m in messages]
        memory.close()
        db = sqlite3.connect(path)
        tables = [t for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        rows = {t: db.execute(f"SELECT * FROM {t} ORDER BY rowid").fetchall() for t in tables}
        return extractor.seen, reports, rows, (tmp_path / f"{path.name}.vectors").read_bytes()

    alone, together = run(False), run(True)
    assert all(len(similar) == 10 for _, similar in alone[0])
    assert together[0] == alone[0]
    assert together[1] == alone[1]
    assert together[2] == alone[2]
    assert together[3] == alone[3]


@pytest.mark.parametrize("n", [5, 64, 67, 130, 1027, 3030, 3031])
def test_some_rows_passed_over_get_exactly_the_scores_of_the_whole_pass(tmp_path, n):
    # Gathered rows, and the last rows of a matrix whose row count is not a multiple of BLAS's kernel width,
    # which the whole pass sums apart.
    rng = np.random.default_rng(n)
    vectors = rng.standard_normal((n, 384), dtype=np.float32)
    store = filled(tmp_path / "e.db", vectors, [f"fact {i}" for i in range(n)], [False] * n)
    query = rng.standard_normal(384, dtype=np.float32)
    whole = store.scores(query)
    for rows in (
        np.arange(n),
        np.arange(n)[::-7],
        np.array([n - 1, 0, n - 3 if n > 3 else 0]),
        rng.permutation(n)[:65],
    ):
        assert np.array_equal(store._pass_over(rows, query), whole[rows])


@settings(max_examples=8, deadline=None)
@given(
    seed=st.integers(min_value=0, max_value=2**32 - 1),
    near_ties=st.integers(min_value=0, max_value=40),
    n=st.sampled_from([BATCH_MIN_ROWS - 1, BATCH_MIN_ROWS + 500, 5003]),
    by_passes=st.booleans(),
)
def test_a_writes_picks_from_scores_taken_together_are_those_of_one_pass_each(
    tmp_path_factory, seed, near_ties, n, by_passes
):
    # What a write reads from `scores_few` (its fact's and the next message's batched scores): the fact's cosine
    # candidates (open or closed by belief, minus the message's facts), its graph candidates (rows in groups), and
    # later, with facts added and a vector rewritten, the next message's similar facts under the mask saved then.
    # Rows meet at the last bit (copies nudged by one float32 step, exact duplicates) around each query's k-th;
    # every pick made exact on the way must be, ids and scores, the pick from `scores`.
    rng = np.random.default_rng(seed)
    dim = 384
    vectors = rng.standard_normal((n + 20, dim), dtype=np.float32)
    queries = rng.standard_normal((2, dim), dtype=np.float32)
    for j in range(near_ties):
        target = rng.integers(n - 1)
        vectors[target] = queries[j % 2] + rng.standard_normal(dim, dtype=np.float32) * 1e-3
        copy = vectors[target] if j % 3 else np.nextafter(vectors[target], np.float32(np.inf))
        vectors[target + 1] = copy
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    texts = [f"fact {i % 89}" for i in range(n + 20)]
    closed = list(rng.random(n) < 0.2)
    store = filled(tmp_path_factory.mktemp("few") / "e.db", vectors[:n], texts[:n], closed)
    exclude = {f"m{r}#0" for r in rng.integers(n, size=5)}
    groups = [rng.integers(n, size=300), np.arange(n // 3, n // 3 + 400)]
    saved, rewrites = store.candidate_mask(), store.rewrite_count()
    store._few_choice = (n, by_passes)  # either way of reading the vectors (the machine's timing picks one)

    first, upcoming = store.scores_few(queries)
    alone = store.scores(queries[0])
    for k in (1, 10, 30):
        picked = store.top(first.copy(), k, candidates_only=True, exclude=exclude, exact_for=queries[0])
        assert picked == store.top(alone, k, candidates_only=True, exclude=exclude)
        picked = store.top(first.copy(), k, exact_for=queries[0])
        assert picked == store.top(alone, k)
        assert store.top_candidates_in(first.copy(), groups, k, exclude, exact_for=queries[0]) == (
            store.top_candidates_in(alone, groups, k, exclude)
        )
    with store.transaction():
        store.add_facts([fact(i, texts[i]) for i in range(n, n + 20)], vectors[n : n + 20])
        store.rewrite("m3#0", "fact 3 again", vectors[n + 5])
    later = store.rescore(upcoming, queries[1], rewrites)[:n]
    assert store.top(later, 10, candidates=saved, exact_for=queries[1]) == (
        store.top(store.scores(queries[1])[:n], 10, candidates=saved)
    )


def test_how_a_few_vectors_are_scored_is_timed_once_and_again_only_after_the_store_grew_fourfold(tmp_path, monkeypatch):
    import engram._store as store_module

    timed: list[int] = []
    monkeypatch.setattr(store_module, "_fastest", lambda work: timed.append(1) or (0.5 if len(timed) % 2 else 1.0))
    rng = np.random.default_rng(11)
    n = BATCH_MIN_ROWS + 100
    vectors = rng.standard_normal((4 * n, 384), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    store = filled(tmp_path / "e.db", vectors[:n], [f"fact {i}" for i in range(n)], [False] * n)
    queries = vectors[:2]
    store.scores_few(queries)
    store.scores_few(queries)
    assert len(timed) == 2 and store._few_choice == (n, False)  # the blocked product timed faster here
    with store.transaction():
        store.add_facts([fact(i, f"fact {i}") for i in range(n, 4 * n)], vectors[n:])
    store.scores_few(queries)
    assert len(timed) == 4 and store._few_choice[0] == 4 * n
