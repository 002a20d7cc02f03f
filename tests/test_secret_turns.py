"""Redaction across turns and across miner processes (`extract.secret_turns`), and the store's digests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from miner import config as config_mod
from miner.extract.secret_turns import Conversation, answer_values, asks_for_secret, digest, known_in, tokens
from miner.memory.store import Store


@pytest.mark.parametrize("text", [
    "Connected. Which password should I set for the new admin account?",
    "What is the staging database password? I'll put it in the vault.",
    "Please paste the API token here.",
    "Could you share the staging credentials so I can run the smoke test",
    "好的。数据库密码是多少？",
    "Which password should I use for staging.example.com?",
    "Which password should I set?\n\n1. Generate one\n2. Give me one",
    "Saved the sender. And the SMTP password for the alerts?",
    "OK, and the passphrase of the deploy key?",
    "Your vault token?",
    # A question that points back at the secret the sentence before it named.
    "The login failed: the password was refused. What is the current one?",
    "The API token has expired. Which one should I use instead?",
    "The database password was rejected again. So what is it now?",
])
def test_a_request_for_a_secret_is_seen(text):
    assert asks_for_secret(text)


@pytest.mark.parametrize("text", [
    "Next I'll change the SessionToken type so it accepts both `token` and `refresh_token` keys:",
    "The release job is set up - all that's left is putting the PyPI token into the repo secrets!",
    "Which port should the API listen on?",
    "Should I hash the password with argon2?",
    "Should I store the session token in localStorage or a cookie?",
    "What is the password hashing library you want?",
    "Do you want me to rotate the tokens now?",
    "And the password hashing?",
    "And the token parser for the CLI?",
    "Now the tests pass?",
    "The password hashing uses argon2. What is the current one?",  # (no secret named before it)
    "The token parser failed. Which one should I use instead?",
    "I rotated the API token. What do you think of the new one?",  # (no value asked for)
    "The password was refused. Who changed it?",
])
def test_talk_about_secrets_is_no_request(text):
    assert not asks_for_secret(text)


def test_a_made_up_value_given_on_request_is_hidden_there_and_later():
    conversation = Conversation()
    conversation.redact("user", "Create the admin account for the billing service.")
    conversation.redact("assistant", "Which password should I set for the admin account?")
    assert conversation.redact("user", "use Qa7!wZ9xLm for it") == ("use [REDACTED:known-secret] for it",
                                                                    ["known-secret"])
    text, _ = conversation.redact("assistant", "The admin account now logs in with Qa7!wZ9xLm.")
    assert "Qa7!wZ9xLm" not in text


def test_a_reply_is_read_as_an_answer_only_right_after_the_request_and_only_for_made_up_values():
    conversation = Conversation()
    conversation.redact("assistant", "Which password should I set for the admin account?")
    assert conversation.redact("user", "whatever you like, something long like horse-staple") == (
        "whatever you like, something long like horse-staple", [])  # words, not a made-up value
    conversation.redact("assistant", "Which password should I set for the admin account?")
    conversation.redact("user", "hold on")
    assert conversation.redact("user", "Qa7!wZ9xLm") == ("Qa7!wZ9xLm", [])  # the request was answered already
    assert answer_values("see https://x.io/a7B!9Qz and ops7@corp.io") == set()  # a link, an address
    assert answer_values("ok: Qa7!wZ9xLm.") == {"Qa7!wZ9xLm"}
    assert answer_values("Qa7!wZ9xLm " + "and more words " * 20) == set()  # more than a value given on request


def test_a_value_given_on_request_with_more_words_after_it_is_hidden_and_so_is_a_passphrase_of_words():
    conversation = Conversation()
    conversation.redact("assistant", "The relay is configured. And the SMTP password for the alerts?")
    text, _ = conversation.redact("user", "Qe7#pLm2Zx9 — and please send the alerts to ops@example.com from now on")
    assert text == "[REDACTED:known-secret] — and please send the alerts to ops@example.com from now on"
    conversation.redact("assistant", "What's the passphrase of the deploy key?")
    text, _ = conversation.redact("user", "lantern-otter-basalt-nine, same as on the laptop")
    assert text == "[REDACTED:known-secret], same as on the laptop"
    text, _ = conversation.redact("assistant", "Unlocked the key with lantern-otter-basalt-nine.")
    assert "lantern" not in text
    assert answer_values("kebab-case, as the other files") == set()  # two words joined are a name
    assert answer_values("it is lantern-otter-basalt-nine") == set()  # only what opens the reply


def test_a_secret_named_once_is_hidden_where_a_later_turn_repeats_it_bare():
    conversation = Conversation()
    conversation.redact("user", "the staging db password is Hx9!kq2LmP and the user is app")
    assert conversation.redact("user", "now try Hx9!kq2LmP on prod") == ("now try [REDACTED:known-secret] on prod",
                                                                       ["known-secret"])


def test_what_one_process_learnt_reaches_the_next_as_digests_only():
    first = Conversation(b"salt-1")
    first.redact("user", "the staging db password is Hx9!kq2LmP and the user is app")
    assert first.learnt == {digest(b"salt-1", "Hx9!kq2LmP")}
    later = Conversation(b"salt-1", frozenset(first.learnt))
    assert later.redact("user", "now try Hx9!kq2LmP, or `Hx9!kq2LmP`.") == (
        "now try [REDACTED:known-secret], or `[REDACTED:known-secret]`.", ["known-secret", "known-secret"])
    other_store = Conversation(b"salt-2", frozenset(first.learnt))  # another store's salt matches nothing
    assert other_store.redact("user", "now try Hx9!kq2LmP") == ("now try Hx9!kq2LmP", [])


def test_tokens_are_the_made_up_words_and_their_values():
    assert tokens("try Hx9!kq2LmP. Or PASS=Zk93fLqpW, `build` 123456 and v2.1") == {
        "Hx9!kq2LmP.", "Hx9!kq2LmP", "PASS=Zk93fLqpW", "Zk93fLqpW"}


def test_the_store_keeps_digests_salted_per_store_and_bounded(tmp_path):
    with Store(tmp_path / "a.db") as a, Store(tmp_path / "b.db") as b:
        salt_a, salt_b = a.secret_digests()[0], b.secret_digests()[0]
        assert len(salt_a) == 16 and salt_a != salt_b
        with a.atomic():
            a.add_secret_digests([digest(salt_a, f"secret-{i}!") for i in range(5)], keep=3)
        with a.atomic():
            a.add_secret_digests([digest(salt_a, "newest-1!")], keep=3)
        kept = a.secret_digests()[1]
        assert len(kept) == 3 and digest(salt_a, "newest-1!") in kept
        with a.atomic():
            a.set_secret_asked("/t.jsonl", True)
        assert a.secret_asked("/t.jsonl") and not a.secret_asked("/other.jsonl")
        with a.atomic():
            a.set_secret_asked("/t.jsonl", False)
        assert not a.secret_asked("/t.jsonl")


def learnt(store: Store, secret: str) -> None:
    """A secret mining found by its context, as the store keeps it (a digest)."""
    salt = store.secret_digests()[0]
    with store.atomic():
        store.add_secret_digests([digest(salt, secret)], keep=100)


def test_a_learnt_secret_typed_bare_into_a_correction_is_hidden(store):
    from miner.memory import corrections
    from tests.test_corrections import add

    old = add(store, "Use MySQL for the reporting database.", 1)
    learnt(store, "Hx9!kq2LmP")
    change = corrections.correct(store, old, "Use PostgreSQL for the reporting database; it logs in with Hx9!kq2LmP.")
    assert "Hx9!kq2LmP" not in store.get(change.new_id).text and "[REDACTED:" in store.get(change.new_id).text


def mcp_session_that_learnt(tmp_path, secret: str):
    """An MCP tool session in a project, with `secret` learnt by the store."""
    from miner import config
    from miner.mcp import tools as mcp_tools

    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    with Store() as store:
        learnt(store, secret)
    return mcp_tools.Session(project=str(root), config=config.load())


def test_a_learnt_secret_stored_bare_through_mcp_is_hidden(tmp_path):
    from miner.mcp import tools as mcp_tools

    session = mcp_session_that_learnt(tmp_path, "Qa7!wZ9xLm")
    result = mcp_tools.store_memory(session, "The reporting job connects to the replica with Qa7!wZ9xLm now.", "fact")
    assert "Qa7!wZ9xLm" not in result["text"] and result["redacted"] == ["known-secret"]


def test_a_learnt_secret_is_found_again_wrapped_or_inside_other_text():
    first = Conversation(b"salt")
    first.redact("user", "the vpn password is Hx9kq2Lm! and the user is ops")
    later = Conversation(b"salt", frozenset(first.learnt))
    for text in ("now try Hx9kq2Lm!.", "use **Hx9kq2Lm!** there", "已更新Hx9kq2Lm!密码", "`Hx9kq2Lm!`/prod"):
        out, _ = later.redact("user", text)
        assert "Hx9kq2Lm" not in out, text
    asked = Conversation()
    asked.redact("assistant", "Which password should I set for the admin account?")
    asked.redact("user", "**Qa7!wZ9xLm**")
    assert asked.redact("user", "Retried Qa7!wZ9xLm on prod.")[0] == "Retried [REDACTED:known-secret] on prod."


def test_a_subagents_turns_use_and_teach_the_learnt_secrets_but_answer_no_request():
    from miner.extract.model import Turn

    def turn(text, role="user", sidechain=False):
        return Turn("u", "s", role, text, "2026-01-01T00:00:00Z", "/p", "main", sidechain, "/t.jsonl")

    first = Conversation(b"salt")
    out = first.redact_turns([turn("the db password is Pz8!mmQ2xw", sidechain=True)])
    assert "Pz8!mmQ2xw" not in out[0].text and first.learnt  # learnt in a subagent's turn, kept
    later = Conversation(b"salt", frozenset(first.learnt))
    asked = [turn("Which password should I set?", role="assistant"), turn("Wq7!zzLp9x", sidechain=True)]
    out = later.redact_turns([turn("connect with Pz8!mmQ2xw", sidechain=True), *asked])
    assert "Pz8!mmQ2xw" not in out[0].text and out[2].text == "Wq7!zzLp9x" and later.asked


def test_every_new_secret_is_kept_even_after_the_known_set_was_trimmed(monkeypatch):
    from miner.extract import secret_turns
    from miner.extract.model import Turn

    monkeypatch.setattr(secret_turns, "MAX_KNOWN", 2)
    conversation = Conversation(b"salt")
    said = "the vpn password is Aa1!aaaaa1, the db password is Bb2!bbbbb2, the wifi password is Cc3!ccccc3"
    conversation.redact_turns([Turn("u", "s", "user", said, "", "/p", "main", False, "/t.jsonl")])
    conversation.learnt.clear()
    conversation.redact("user", "the new password is Dd4!ddddd4")
    assert conversation.learnt == {digest(b"salt", "Dd4!ddddd4")}


def test_a_digest_seen_again_is_the_newest_and_a_secret_with_a_blank_is_not_kept(store):
    salt = store.secret_digests()[0]
    old, other, third = digest(salt, "Oo1!ooooo1"), digest(salt, "Pp2!ppppp2"), digest(salt, "Qq3!qqqqq3")
    for batch in ([old], [other], [old], [third]):
        with store.atomic():
            store.add_secret_digests(batch, keep=2)
    assert store.secret_digests()[1] == {old, third}  # the one seen again outlives the one seen once
    conversation = Conversation(salt)
    conversation.redact("user", "the passphrase is 'violet otter lamp ninety'")
    assert conversation.learnt == set()


def test_a_learnt_secret_given_as_an_mcp_keyword_is_dropped(tmp_path):
    from miner.mcp import tools as mcp_tools

    session = mcp_session_that_learnt(tmp_path, "Qa7!wZ9xLm")
    result = mcp_tools.store_memory(session, "The reporting job now connects to the read replica.", "fact",
                                    keywords=["Qa7!wZ9xLm", "replica"])
    with Store(readonly=True) as store:
        assert "qa7!wz9xlm" not in store.get(result["id"]).keywords


def test_a_secret_hidden_by_mcp_is_learnt_and_hidden_where_it_is_stored_again(tmp_path):
    """A password `memory_store` hid was learnt by nothing: stored again as a keyword, or in a text that does not
    say what it is, it was kept in clear (and exported). A memory stored before that said it bare is scrubbed."""
    from miner.mcp import tools as mcp_tools

    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    session = mcp_tools.Session(project=str(root), config=config_mod.load())
    earlier = mcp_tools.store_memory(session, "The nightly export job is named Zq8pLm3vR7x for now.", "fact")
    first = mcp_tools.store_memory(session, "The admin password of the staging box is Zq8pLm3vR7x.", "fact")
    assert "Zq8pLm3vR7x" not in first["text"] and first["redacted"], first
    again = mcp_tools.store_memory(session, "The reporting job now reads from the replica.", "fact",
                                   keywords=["Zq8pLm3vR7x", "replica"])
    bare = mcp_tools.store_memory(session, "Remember Zq8pLm3vR7x when the box is rebuilt next week.", "todo")
    assert "Zq8pLm3vR7x" not in bare["text"], bare
    with Store(readonly=True) as store:
        assert "replica" in store.get(again["id"]).keywords
        rows = [(m.text, m.keywords) for m in store.list_memories(limit=100, states=())]
        assert store.counters().get("scrub_pending", 0) == 0
    assert "zq8plm3vr7x" not in repr(rows).lower() and earlier["id"], rows
    assert b"zq8plm3vr7x" not in (Path(os.environ["MINER_HOME"]) / "memory.db").read_bytes().lower()


@pytest.mark.parametrize("keyword", ["Xk29pQz7Lw", "a9F3kQ2zP7wR"])
def test_a_generated_looking_keyword_given_through_mcp_is_dropped_whatever_the_text_says(tmp_path, keyword):
    from miner.mcp import tools as mcp_tools

    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    session = mcp_tools.Session(project=str(root), config=config_mod.load())
    result = mcp_tools.store_memory(session, "The reporting job now reads from the replica.", "fact",
                                    keywords=[keyword, "replica"])
    with Store(readonly=True) as store:
        keywords = store.get(result["id"]).keywords.split()
    assert "replica" in keywords and keyword.lower() not in keywords, keywords


@pytest.mark.parametrize("request_,reply,secret", [
    ("Let me know the password and I'll run the migration.", "Mq4Lz8Wt", "Mq4Lz8Wt"),
    ("I'll need your API token for the registry before I can push.", "Rt6Kx2Pq9Lm4Zw7N", "Rt6Kx2Pq9Lm4Zw7N"),
    ("Which PIN does the hardware key use?", "582014", "582014"),
    ("What's the PIN of the test phone?", "it's 4417", "4417"),
    ("デプロイ用のパスワードを教えてください。", "Jn3Pw8Lz", "Jn3Pw8Lz"),
    ("Dime la contraseña del servidor de staging.", "Es7Qw2Lm", "Es7Qw2Lm"),
    ("The login failed: the password was refused. What is the current one?", "it's Zebra-Quartz-81 now",
     "Zebra-Quartz-81"),
])
def test_a_value_given_after_a_request_said_in_more_ways_is_hidden(request_, reply, secret):
    conversation = Conversation()
    conversation.redact("assistant", request_)
    out, kinds = conversation.redact("user", reply)
    assert secret not in out and kinds, out


@pytest.mark.parametrize("request_,reply", [
    ("Let me know when the migration has finished.", "4417"),
    ("I need the port the service listens on.", "8080"),
    ("I'll need the token parser to be rewritten first. OK?", "2025"),
])
def test_digits_after_what_asks_for_no_secret_are_kept(request_, reply):
    conversation = Conversation()
    conversation.redact("assistant", request_)
    assert conversation.redact("user", reply) == (reply, [])


@pytest.mark.parametrize("said,reply,secret", [
    ("The push was rejected: the registry token has expired.", "here is a new one: Vb8Nq3Wz5Kt2", "Vb8Nq3Wz5Kt2"),
    ("Login failed for user `deploy` on the staging box.", "oh, use Pz6Rk2Wq then", "Pz6Rk2Wq"),
    ("The smoke test needs credentials for the mail relay.", "relay-bot and Hs4Mv9Qx", "Hs4Mv9Qx"),
])
def test_a_made_up_value_in_a_reply_to_a_turn_that_named_a_secret_is_hidden(said, reply, secret):
    """The assistant named a secret without asking for it (a failure, a need), and the user's reply gave one."""
    conversation = Conversation()
    conversation.redact("assistant", said)
    out, kinds = conversation.redact("user", reply)
    assert secret not in out and kinds, out


@pytest.mark.parametrize("said,reply", [
    ("The token parser now accepts both formats.", "nice, ship it in Rel4Candidate2"),  # no secret named
    ("The registry token has expired.", "renew it in the settings page, not now"),  # no value
    ("Login failed for user `deploy`.", "look at commit 3f9a2c7e1b4d, it changed the auth flow"),  # a hash
])
def test_a_reply_after_a_turn_about_a_secret_keeps_what_is_no_made_up_value(said, reply):
    conversation = Conversation()
    conversation.redact("assistant", said)
    assert conversation.redact("user", reply) == (reply, [])


def test_only_a_secret_new_to_the_store_is_handed_on_to_be_scrubbed_from_what_it_held_before():
    """`fresh` is what the miner looks for in the rows stored earlier: a secret the store knew already was looked for
    when it was learnt (and a text that repeats it each session would cost a look through every table each time);
    a PIN's digits are everywhere."""
    salt = b"s" * 16
    conversation = Conversation(salt, frozenset({digest(salt, "Qm7#vTz2Lp9w")}))
    conversation.redact("user", "the staging db password is Qm7#vTz2Lp9w and the admin one is Hx4!rNb8Ks2d")
    assert conversation.fresh == {"Hx4!rNb8Ks2d"} and digest(salt, "Hx4!rNb8Ks2d") in conversation.learnt
    conversation.redact("assistant", "Which PIN does the hardware key use?")
    conversation.redact("user", "582014")
    assert conversation.fresh == {"Hx4!rNb8Ks2d"}


@pytest.mark.parametrize("turns,doubtful", [
    # the rest of a sentence that gave a password: a host's name is hidden with it, as the safer mistake
    ([("user", "The staging password is Xk29!pQz7 and the host is pgStaging01 on port 5432.")], "pgStaging01"),
    # a made-up value near a login's words
    ([("user", "The auth middleware now decodes Base64Url ids.")], "Base64Url"),
    # a reply after a turn that named a secret without asking for one
    ([("assistant", "All tests pass, including the login tests."), ("user", "try the ResNet50 fixture then")],
     "ResNet50"),
])
def test_a_value_hidden_as_the_safer_mistake_is_hidden_there_only_and_never_learnt(turns, doubtful):
    """A token hidden only for standing near a secret may be a host's or a model's name: learnt, it was hidden in
    every later text, and what the store held of it was redacted, in every project, for good."""
    salt = b"s" * 16
    conversation = Conversation(salt)
    for role, text in turns:
        out, _ = conversation.redact(role, text)
    assert doubtful not in out  # (where it was said)
    assert doubtful not in conversation.known and doubtful not in conversation.fresh
    assert digest(salt, doubtful) not in conversation.learnt
    assert conversation.redact("user", f"now rename {doubtful} in the docs")[0] == f"now rename {doubtful} in the docs"


@pytest.mark.parametrize("turns,secret", [
    # stated plainly, after a turn that named a secret (its reply's made-up values are doubtful; this one is not)
    ([("assistant", "Login failed for user `admin`."), ("user", "the staging password is Zr5#Tq9pLm")], "Zr5#Tq9pLm"),
    # a made-up value near a secret's name, and the second value of a sentence: they look generated
    ([("user", "I rotated the staging password. New one: Xy7#kLm9qT")], "Xy7#kLm9qT"),
    ([("user", "the staging password is Vq7mLx2k and the admin one is Hx4!rNb8Ks2d")], "Hx4!rNb8Ks2d"),
    ([("user", "creds for the ftp: ftpuser Pq8$Lm2zWx")], "Pq8$Lm2zWx"),
    # a reply after a turn that named a secret, with a value that looks generated: learnt as a pass's would be
    ([("assistant", "The push was rejected: the registry token has expired."),
      ("user", "here is a new one: Vb8Nq3Wz5Kt2")], "Vb8Nq3Wz5Kt2"),
])
def test_a_secret_given_plainly_is_learnt_and_hidden_where_it_is_said_again(turns, secret):
    """Values hidden for standing near a secret were no longer learnt at all, and a reply's plainly stated password
    was not learnt after a turn that named a secret: each was in clear where the user said it again."""
    conversation = Conversation(b"s" * 16)
    for role, text in turns:
        assert secret not in conversation.redact(role, text)[0]
    assert secret not in conversation.redact("user", f"We decided to run the migration with {secret} on prod too.")[0]
    assert secret in conversation.fresh


@pytest.mark.parametrize("between", [[], [("assistant", "Sure, send it over.")]])
def test_a_value_the_user_announced_is_hidden_in_their_next_prompt_and_learnt(between):
    """"I'll paste the password in my next message", then the password alone: the user asked it of themselves."""
    conversation = Conversation()
    conversation.redact("user", "I'll paste the new prod DB password in my next message, put it in the vault config.")
    for role, text in between:
        conversation.redact(role, text)
    assert conversation.asked  # (what a miner keeps for the next Stop's lines when this chunk ends here)
    assert conversation.redact("user", "Zr8!Quartz77") == ("[REDACTED:known-secret]", ["known-secret"])
    assert "Zr8!Quartz77" in conversation.known


def test_an_announcement_answers_only_the_next_prompt_and_a_value_given_with_it_is_no_announcement():
    conversation = Conversation()
    conversation.redact("user", "The deploy token expired again, fix the refresh logic.")
    conversation.redact("assistant", "Fixed: the refresh now runs before expiry.")
    assert conversation.redact("user", "use exponential backoff with jitter") == (
        "use exponential backoff with jitter", [])
    assert conversation.redact("user", "Qa7!wZ9xLm") == ("Qa7!wZ9xLm", [])  # two prompts later: nothing asked
    given = Conversation()
    given.redact("user", "The staging password is Xk29!pQz7 from now on.")
    assert not given.asked  # it was given, not announced


def test_the_checkpoint_hides_a_value_the_miner_hid_in_its_own_turn_only():
    """A made-up value in a reply to a turn that named a secret is hidden there only (`hidden`): the checkpoint,
    which shows a few turns as they were said, hides it in each of them."""
    conversation = Conversation()
    conversation.redact("assistant", "The deploy failed. The token seems to have expired.")
    text, _ = conversation.redact("user", "here's a fresh one RzTnWp99 for the staging deploy job")
    assert "RzTnWp99" not in text and "RzTnWp99" not in conversation.known
    assert "RzTnWp99" in conversation.hidden


def test_a_plain_word_given_as_a_password_is_hidden_where_a_later_text_speaks_of_a_login_or_a_secret():
    """"The staging admin password is swordfish", then "always try swordfish first on the login page": the word was
    hidden once, then stored bare (a global preference, shown in every project). A plain word is no made-up value:
    learnt into `known`, it would be hidden in every text that says it, so it is looked for only where a secret or a
    login is spoken of, in this process and, through the store's digests, in the next."""
    salt = b"s" * 16
    first = Conversation(salt)
    assert first.redact("user", "Decision: the staging admin password is swordfish, we keep it until launch.")[1]
    assert "swordfish" not in first.known and "swordfish" not in first.fresh  # never scrubbed from every row
    assert first.redact("user", "From now on always try swordfish first on the staging login page.")[0] == (
        "From now on always try [REDACTED:known-secret] first on the staging login page.")
    assert first.redact("user", "The swordfish logo goes on the landing page.") == (
        "The swordfish logo goes on the landing page.", [])
    assert digest(salt, "swordfish") in first.learnt
    later = Conversation(salt, frozenset(first.learnt))  # the next Stop's miner: the store's digests only
    assert later.redact("user", "Log in with swordfish on the staging box.")[0] == (
        "Log in with [REDACTED:known-secret] on the staging box.")
    assert later.redact("user", "The swordfish logo goes on the landing page.")[1] == []
    product = Conversation(salt)
    product.redact("user", "The admin password is postgres for now.")
    assert product.redact("user", "We use postgres for the main database.")[1] == []  # a word, where no secret is


@pytest.mark.parametrize("announcement", [
    "Te mando la contraseña de la base de datos en el siguiente mensaje.",
    "Ti mando la password del database nel prossimo messaggio.",
    "DB 비밀번호는 다음 메시지에 보낼게요.",
    "数据库密码我下条消息发你。",
    "The prod DB password is coming in a sec.",
])
def test_a_secret_announced_in_other_words_and_languages_is_hidden_in_the_next_prompt(announcement):
    conversation = Conversation()
    conversation.redact("user", announcement)
    conversation.redact("assistant", "OK.")
    assert conversation.redact("user", "Tr0ub4dor&3")[0] == "[REDACTED:known-secret]"


def test_naming_a_secret_without_saying_one_comes_next_asks_for_nothing():
    """Any user turn that named a login or a token and gave no value took the next prompt's made-up tokens for a
    secret: a cache version and a commit hash were learnt, and scrubbed from every stored row."""
    conversation = Conversation(b"s" * 16)
    conversation.redact("user", "Add rate limiting to the login endpoint.")
    conversation.redact("assistant", "Done: 10 requests a minute per address.")
    assert conversation.redact("user", "Good. Now bump the cache version to cache-v20240611b and redeploy.")[1] == []
    assert not conversation.fresh


def test_what_the_pass_over_changed_units_finds_is_learnt_for_the_next_miner():
    from miner.extract.model import Turn, Unit

    salt = b"s" * 16
    conversation = Conversation(salt)
    text = "I set it up.\nstaging db password:" + " " * 70 + "Xk29pQz7Lm4\nRun the migration next."
    turn = Turn("x", "s1", "assistant", text, "2026-03-02T10:00:00.000Z", "/p", "main", False, "/t.jsonl")
    unit = Unit(turn=turn, index=1, text="staging db password: Xk29pQz7Lm4", previous="I set it up.")
    assert "Xk29pQz7Lm4" not in conversation.redact_units([unit])[0].text
    assert "Xk29pQz7Lm4" in conversation.fresh
    later = Conversation(salt, frozenset(conversation.learnt))
    assert "Xk29pQz7Lm4" not in later.redact("user", "Run the migration with Xk29pQz7Lm4 on staging.")[0]


def test_a_plain_word_quoted_or_typed_by_hand_later_is_hidden_too():
    """Quoted, the word was hidden where it was given only; a memory stored through MCP or a correction (which look
    secrets up with `known_in`) kept it bare."""
    salt = b"s" * 16
    conversation = Conversation(salt)
    conversation.redact("user", "Decision: the staging admin password is 'swordfish', we keep it until launch.")
    assert "swordfish" not in conversation.redact("user", "Always try swordfish first on the staging login page.")[0]
    assert known_in("Always try swordfish first on the staging login page.", salt,
                    frozenset(conversation.learnt)) == {"swordfish"}
    assert known_in("The swordfish logo.", salt, frozenset(conversation.learnt)) == set()
