"""Every scenario field is a command-line option, read from the options or a TOML file."""

import argparse
import dataclasses
import json
import re

import pytest
from scipy import stats

from spare_theory import Scenario, StepScenario, paper_scenario
from spare_theory.cli import build_parser, main
from spare_theory.cli.fields import add_scenario_options, field_options
from spare_theory.cli.laws import law_text, parse_law
from spare_theory.cli.points import build_scenario, scenario_points
from spare_theory.hourly.domains import scenario_with_domain_share


def _options(command):
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {s: a for a in sub.choices[command]._actions for s in a.option_strings}


@pytest.mark.parametrize("command", ["optimize", "sweep"])
@pytest.mark.parametrize("cls", [Scenario, StepScenario])
def test_every_field_is_an_option(command, cls):
    options = _options(command)
    for field in dataclasses.fields(cls):
        if not field.compare:
            continue  # the provenance a log leaves is not a value to set
        flag = "--" + field.name.replace("_", "-")
        assert flag in options, f"{cls.__name__}.{field.name} has no option {flag} in {command}"
        assert options[flag].dest == f"field_{field.name}"
        # The help is the field's own documentation, under its class's name.
        assert f"{cls.__name__}:" in options[flag].help


def test_help_groups_the_fields_by_topic(capsys):
    assert main(["optimize", "--help"]) == 0
    out = capsys.readouterr().out
    groups = re.findall(r"^scenario: (.+):$", out, re.M)
    assert {"cluster and work", "failures", "repairs and spares", "micro-batches"} <= set(groups)
    assert "Law of one GPU's lifetime" in " ".join(out.split())


def test_a_new_field_needs_no_cli_edit():
    """A field added to the dataclass (here by subclassing) becomes an option with its help."""

    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Wider(Scenario):
        """Scenario with one more field.

        Parameters
        ----------
        spare_warmup_minutes : float
            Time to warm a spare node up before it joins, minutes, ``>= 0``.
        """

        spare_warmup_minutes: float = 0.0

    from spare_theory.cli import fields

    field_options.cache_clear()
    original = fields.scenario_classes
    try:
        fields.scenario_classes = lambda: {"hour": Wider, "step": StepScenario}
        option = next(o for o in field_options() if o.name == "spare_warmup_minutes")
        parser = argparse.ArgumentParser()
        add_scenario_options(parser)
        parsed = parser.parse_args(["--spare-warmup-minutes", "2.5"])
        assert parsed.field_spare_warmup_minutes == 2.5
        assert option.topic == "repairs and spares" and "warm a spare node up" in option.help
    finally:
        fields.scenario_classes = original
        field_options.cache_clear()


def test_values_reach_the_scenario(capsys):
    argv = ["optimize", "--gpus", "4096", "--gpus-per-group", "16", "--work-hours", "50"]
    argv += ["--failure-law", "weibull", "--weibull-shape", "0.7", "--strategy", "ckpt", "--json"]
    assert main(argv) == 0
    sc = json.loads(capsys.readouterr().out)["scenario"]
    assert (sc["gpus"], sc["failure_law"], sc["weibull_shape"], sc["N"]) == (
        4096,
        "weibull",
        0.7,
        256,
    )


def test_integral_numbers_are_integers(capsys):
    assert main(["mu", "--N", "1e12", "--r", "3", "--trials", "0", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["N"] == 10**12
    for bad in ("1.5", "nan", "1e400", "abc"):
        assert main(["mu", "--N", bad, "--r", "3"]) == 2
        assert "--N" in capsys.readouterr().err


def test_toml_file_and_options_override_it(tmp_path, capsys):
    path = tmp_path / "run.toml"
    path.write_text(
        'gpus = 4096\ngpus_per_group = 16\nwork_hours = 50\nrepair_law = "fixed"\n'
        "repair_minutes = 30\n"
    )
    argv = ["optimize", "--scenario", str(path), "--work-hours", "80", "--strategy", "rep"]
    assert main([*argv, "--json"]) == 0
    sc = json.loads(capsys.readouterr().out)["scenario"]
    assert (sc["gpus"], sc["work_hours"], sc["repair_law"], sc["repair_minutes"]) == (
        4096,
        80.0,
        "fixed",
        30.0,
    )


@pytest.mark.parametrize(
    "text, word",
    [
        ("bogus = 3\n", "not a scenario field"),
        ("gpus = [4096, 8192]\n", "grid axis"),
        ("gpus = 1.5\n", "not an integer"),
        ("gpus = \n", "not TOML"),
    ],
)
def test_bad_toml_is_one_line(tmp_path, capsys, text, word):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    assert main(["optimize", "--scenario", str(path)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and word in err


def test_toml_lists_are_sweep_axes(tmp_path):
    path = tmp_path / "grid.toml"
    path.write_text("gpus = [4096, 8192]\ngpus_per_group = 16\n")
    parser = argparse.ArgumentParser()
    add_scenario_options(parser, several=True)
    points = scenario_points(parser.parse_args(["--scenario", str(path)]), several=True)
    assert [(p.axes, p.scenario.groups) for p in points] == [
        ({"gpus": 4096}, 256),
        ({"gpus": 8192}, 512),
    ]


def test_laws_round_trip():
    for text in ("lognorm:s=1.2,scale=30", "gamma:a=2,scale=15", "weibull_min:c=0.5,scale=400"):
        law = parse_law(text)
        again = parse_law(law_text(law))
        assert again.dist.name == law.dist.name and again.mean() == pytest.approx(law.mean())
    assert parse_law("weibull:mean=60000,shape=0.78").mean() == pytest.approx(60000)
    for bad in ("norm2:loc=1", "lognorm:s", "weibull:shape=0.7", "gamma:b=2"):
        with pytest.raises(argparse.ArgumentTypeError):
            parse_law(bad)


def test_step_level_from_the_paper_and_from_scratch():
    paper = build_scenario({"failure_law": "weibull", "microbatches": 16}, paper=200)
    expected = dataclasses.replace(paper_scenario(200, failure_law="weibull"), microbatches=16)
    assert paper == expected
    law = stats.expon(scale=60_000.0)
    fresh = build_scenario(
        {"groups": 200, "steps": 100, "allreduce_seconds": 2.0, "failure_law": law}
    )
    assert fresh == StepScenario(groups=200, steps=100, allreduce_seconds=2.0, failure_law=law)


@pytest.mark.parametrize(
    "argv, word",
    [
        (["--paper", "200", "--gpus", "4096"], "cannot be combined"),
        (["--steps", "100"], "needs --groups"),
        (["--domain-share", "0.3"], "--domain-share S needs --domain-size"),
        (["--paper", "200", "--failure-law", "bogus:x=1"], "scipy.stats"),
        (["--paper", "200", "--planned-restarts"], "hour-level"),
    ],
)
def test_inconsistent_scenarios_are_one_line(capsys, argv, word):
    assert main(["optimize", *argv]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and word in err


def test_domain_share_is_scenario_with_domain_share():
    base = Scenario(
        gpus=65536, gpus_per_group=64, restart_minutes=60, checkpoint_minutes=5, work_hours=720
    )
    built = build_scenario(
        {"gpus": 65536, "gpus_per_group": 64, "domain_size": 8}, domain_share=0.3
    )
    assert built == scenario_with_domain_share(base, 8, 0.3)
