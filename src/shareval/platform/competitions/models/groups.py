"""Run groups: several datasets of one phase that share quotas and one primary run
per team (MATERIAL 8.1: up to 5 runs per language over its CLIR and E2E datasets,
exactly one primary, an E2E run). A dataset is in at most one group (the bundle
loader checks it); a dataset in no group keeps its own quotas and primary."""
from __future__ import annotations

from django.db import models

from shareval.platform.competitions.models.core import Dataset, Phase, Quota


class RunGroupManager(models.Manager):
    def for_dataset(self, dataset: Dataset):
        """The group ``dataset`` belongs to, or None."""
        return self.filter(datasets=dataset).first()


class RunGroup(models.Model):
    phase = models.ForeignKey(Phase, on_delete=models.CASCADE, related_name="run_groups")
    slug = models.SlugField()
    title = models.CharField(max_length=200, blank=True)
    datasets = models.ManyToManyField(Dataset, related_name="run_groups")
    # the datasets whose runs may be primary (all of the group's when empty)
    primary_from = models.ManyToManyField(Dataset, related_name="+", blank=True)
    primary_required = models.BooleanField(
        default=False, help_text="every team with runs in the group must flag one primary "
                                 "before the phase closes (the deadline check names the others)")

    objects = RunGroupManager()

    class Meta:
        unique_together = [("phase", "slug")]
        ordering = ["id"]

    def __str__(self):
        return self.title or self.slug

    @property
    def name(self) -> str:
        return self.title or self.slug

    def dataset_slugs(self) -> list[str]:
        return [d.slug for d in self.datasets.order_by("id")]

    def may_be_primary(self, dataset: Dataset) -> bool:
        allowed = list(self.primary_from.values_list("pk", flat=True))
        return not allowed or dataset.pk in allowed

    def contrastive_only(self, dataset: Dataset) -> str:
        """The refusal for a primary run of ``dataset``, or '' when it may be primary."""
        if self.may_be_primary(dataset):
            return ""
        allowed = ", ".join(self.primary_from.order_by("id").values_list("slug", flat=True))
        return (f"{dataset.slug} runs are contrastive in {self.name}: the primary is a run "
                f"of {allowed}")


def group_of(dataset: Dataset) -> RunGroup | None:
    return RunGroup.objects.for_dataset(dataset)


def quotas_of(dataset: Dataset) -> list[Quota]:
    """The quotas a run on ``dataset`` counts against: the dataset's own and its group's."""
    return list(dataset.quotas.all()) + list(
        Quota.objects.filter(group__datasets=dataset).select_related("group__phase"))


def may_be_primary(dataset: Dataset) -> bool:
    g = group_of(dataset)
    return g is None or g.may_be_primary(dataset)
