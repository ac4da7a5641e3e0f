"""Baseline teams have no members: the organizer who loaded a bundle was made one,
so their team page, the leaderboard and the API took the baseline for their team."""
from django.db import migrations


def remove_baseline_members(apps, schema_editor):
    Membership = apps.get_model("competitions", "Membership")
    Membership.objects.filter(team__is_baseline=True).delete()


class Migration(migrations.Migration):
    dependencies = [("competitions", "0008_team_lead_invitations")]
    operations = [migrations.RunPython(remove_baseline_members, migrations.RunPython.noop)]
