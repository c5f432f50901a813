"""The TOML configuration: every mistake is one line naming the file, the section and the setting."""

import pytest
from click.testing import CliRunner

from scoreboard.cli import main
from scoreboard.service.tables.config import ConfigError, load_config
from testing.tables import written


def write(tmp_path, text):
    return str(written(tmp_path, text))


def test_a_good_config(tmp_path):
    config = load_config(
        write(
            tmp_path,
            """
[tables.T1]
name = "Baccarat 1"
variant = "super-six"
super_six_pays = 15
feed_token = "x-table-feed-token"
simulate = true
require_seq = false
squeeze = true
lang = "zh-Hant"
stale_after = 30
[tables.T1.patterns]
long = 5

[tables.T2]
feed_token = "y-table-feed-token"

[operators.alice]
token = "alice-token-of-T1"
tables = ["T1"]

[operators.bob]
token = "bob-token-of-all-22"
""",
        )
    )
    t1, t2 = config.tables
    assert (t1.id, t1.variant, t1.super_six_pays, t1.patterns.long) == ("T1", "super-six", 15, 5)
    assert (t1.require_seq, t1.squeeze, t1.lang, t1.stale_after) == (False, True, "zh-Hant", 30)
    assert (t2.require_seq, t2.squeeze, t2.lang, t2.stale_after) == (True, False, None, 120), "the defaults"
    assert config.simulated == {"T1"}
    alice, bob = config.operators
    assert alice.may_act_on("T1") and not alice.may_act_on("T2")
    assert bob.may_act_on("T1") and bob.may_act_on("T2"), "an operator without a tables list acts on every table"


@pytest.mark.parametrize(
    "text, words",
    [
        ("[tables.T1\n", "not valid TOML"),
        ("[tables]\n", "has no tables"),
        ("[other]\nx = 1\n", "unknown section 'other'"),
        ('[tables.T1]\nvariant = "no-commission"\n', "[tables.T1] needs a feed_token"),
        (
            '[tables.T1]\nfeed_token = "x-table-feed-token"\nvariant = "baccarat-deluxe"\n',
            "unknown variant 'baccarat-deluxe'",
        ),
        (
            '[tables.T1]\nfeed_token = "x-table-feed-token"\nvariant = "super-six"\nsuper_six_pays = 20\n',
            "super_six_pays",
        ),
        ('[tables.T1]\nfeed_token = "x-table-feed-token"\ndecks = 3\n', "decks must be a whole number from 4 to 8"),
        (
            '[tables.T1]\nfeed_token = "x-table-feed-token"\ncolour = "red"\n',
            "[tables.T1] has an unknown setting 'colour'",
        ),
        ('[tables.T1]\nfeed_token = "x-table-feed-token"\n[tables.T1.patterns]\nlong = 0\n', "at least 1"),
        # The four the issue names: an id with "/", min above max, a wrong type, an unknown key.
        ('[tables."A/B"]\nfeed_token = "x-table-feed-token"\n', "table id 'A/B' must be"),
        (
            '[tables.T1]\nfeed_token = "x-table-feed-token"\nmin_bet = 500\nmax_bet = 100\n',
            "[tables.T1] min_bet 500 is more than max_bet",
        ),
        (
            '[tables.T1]\nfeed_token = "x-table-feed-token"\ndecks = "8"\n',
            "[tables.T1] decks must be a whole number, not '8'",
        ),
        (
            '[tables.T1]\nfeed_token = "x-table-feed-token"\nsqueeze = 1\n',
            "[tables.T1] squeeze must be true or false, not 1",
        ),
        ('[tables.T1]\nfeed_token = "x-table-feed-token"\nlang = "fr"\n', "lang must be one of en, zh-Hans, zh-Hant"),
        (
            '[tables.T1]\nfeed_token = "x-table-feed-token"\n[operators.al]\ntoken = "short"\n',
            "[operators.al] token must be text of 16 to 200",
        ),
        (
            '[tables.T1]\nfeed_token = "x-table-feed-token"\n'
            '[operators.al]\ntoken = "a-long-enough-token"\ntables = ["T9"]\n',
            "'T9'",
        ),
        (
            '[tables.T1]\nfeed_token = "the-same-long-token"\n[operators.al]\ntoken = "the-same-long-token"\n',
            "share a token",
        ),
    ],
)
def test_config_mistakes(tmp_path, text, words):
    with pytest.raises(ConfigError) as e:
        load_config(write(tmp_path, text))
    message = str(e.value)
    assert words in message and "tables.toml" in message and "\n" not in message


def test_serve_refuses_a_bad_config_with_the_reason(tmp_path):
    path = write(tmp_path, '[tables.T1]\nfeed_token = "x-table-feed-token"\nvariant = "nope"\n')
    out = CliRunner().invoke(main, ["serve", "--config", path, "--db", str(tmp_path / "x.sqlite3")])
    assert out.exit_code != 0 and "unknown variant 'nope'" in out.output
    assert "Traceback" not in out.output


def test_missing_config_file(tmp_path):
    with pytest.raises(ConfigError, match="cannot read the config"):
        load_config(str(tmp_path / "missing.toml"))
