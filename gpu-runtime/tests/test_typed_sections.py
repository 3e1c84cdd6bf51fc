"""The loop reads the RunSpec once into its typed form and hands each part its own section (issue #26): actors keep
their typed `Actor` section next to the document's, backends read a typed `training`, the residency default reads
the typed trainer. These check what each part receives, on CPU."""

import torch
from runtime_helpers import small_spec

from troupe.actors import build_actors
from troupe.launch.distributed import SINGLE
from troupe.engines.train import BackendSettings
from troupe.residency.manager import offload_between_phases
from troupe.spec import load_spec
from troupe.spec.runspec_types import ActorTraining, RunSpec, Trainer, to_dict

CPU = torch.device("cpu")


def test_backend_settings_read_a_partial_document_and_a_typed_section_alike():
    """Tests and benches hand a partial `training` document; the schema's defaults fill the rest, as for a typed one."""
    partial = BackendSettings("a", {"learningRate": 0.01, "precision": "bf16"}, CPU, SINGLE)
    typed = BackendSettings("a", ActorTraining.from_dict({"learningRate": 0.01, "precision": "bf16"}), CPU, SINGLE)
    assert partial.config == typed.config
    assert partial.config.learning_rate == 0.01 and partial.config.optimizer == "adamw" and partial.config.betas == (0.9, 0.999)
    assert partial.bf16 and typed.bf16
    assert typed.training == to_dict(typed.config) and typed.training["learningRate"] == 0.01  # the dict readers' view


def test_each_actor_holds_its_typed_section_and_the_documents(tmp_path):
    document = load_spec(small_spec(steps=1))
    run = RunSpec.from_dict(document)
    actors, api_actors = build_actors(run, tmp_path, CPU, SINGLE, lambda level, message: None, document=document)
    assert api_actors == {}
    assert list(actors) == [a.name for a in run.actors]
    for i, (name, actor) in enumerate(actors.items()):
        assert actor.section is run.actors[i]  # the section the loop read, not a copy
        assert actor.spec is document["actors"][i]  # the document's own section, for the parts that read a dict
        assert actor.device == CPU and actor.trainable == run.actors[i].trainable
        assert actor.backend is not None and actor.backend.settings.config == run.actors[i].training


def test_offload_between_phases_reads_the_typed_trainer():
    two_on_one_gpu = {"a": torch.device("cuda", 0), "b": torch.device("cuda", 0)}
    one_each = {"a": torch.device("cuda", 0), "b": torch.device("cuda", 1)}
    default = Trainer.from_dict({})
    assert offload_between_phases(default, two_on_one_gpu) is True
    assert offload_between_phases(default, one_each) is False
    assert offload_between_phases(default, {"a": CPU, "b": CPU}) is False  # host memory: nothing to free
    assert offload_between_phases(Trainer.from_dict({"offloadBetweenPhases": False}), two_on_one_gpu) is False
    assert offload_between_phases(Trainer.from_dict({"offloadBetweenPhases": True}), one_each) is True
