"""The TOML table configuration: every mistake named with its file, table and setting."""

import pytest
from click.testing import CliRunner

from scoreboard.cli import main
from scoreboard.service.config import ConfigError, load_tables


def write(tmp_path, text):
    path = tmp_path / "tables.toml"
    path.write_text(text)
    return str(path)


def test_a_good_config(tmp_path):
    configs, simulated = load_tables(
        write(
            tmp_path,
            """
[tables.T1]
name = "Baccarat 1"
variant = "super-six"
super_six_pays = 15
feed_token = "x"
simulate = true
[tables.T1.patterns]
long = 5
""",
        )
    )
    [t] = configs
    assert (t.id, t.variant, t.super_six_pays, t.patterns.long) == ("T1", "super-six", 15, 5)
    assert simulated == {"T1"}


@pytest.mark.parametrize(
    "text, words",
    [
        ("[tables.T1\n", "not valid TOML"),
        ("[other]\nx = 1\n", "has no tables"),
        ('[tables.T1]\nvariant = "no-commission"\n', "needs a feed_token"),
        ('[tables.T1]\nfeed_token = "x"\nvariant = "baccarat-deluxe"\n', "unknown variant 'baccarat-deluxe'"),
        ('[tables.T1]\nfeed_token = "x"\nvariant = "super-six"\nsuper_six_pays = 20\n', "super_six_pays"),
        ('[tables.T1]\nfeed_token = "x"\ndecks = 3\n', "decks must be a whole number from 4 to 8"),
        ('[tables.T1]\nfeed_token = "x"\ncolour = "red"\n', "unknown settings colour"),
        ('[tables.T1]\nfeed_token = "x"\n[tables.T1.patterns]\nlong = 0\n', "at least 1"),
    ],
)
def test_config_mistakes(tmp_path, text, words):
    with pytest.raises(ConfigError) as e:
        load_tables(write(tmp_path, text))
    assert words in str(e.value) and "tables.toml" in str(e.value)


def test_serve_refuses_a_bad_config_with_the_reason(tmp_path):
    path = write(tmp_path, '[tables.T1]\nfeed_token = "x"\nvariant = "nope"\n')
    out = CliRunner().invoke(main, ["serve", "--config", path, "--db", str(tmp_path / "x.sqlite3")])
    assert out.exit_code != 0 and "unknown variant 'nope'" in out.output


def test_missing_config_file(tmp_path):
    with pytest.raises(ConfigError, match="cannot read the config"):
        load_tables(str(tmp_path / "missing.toml"))
