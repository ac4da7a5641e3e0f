from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("submissions", "0003_indexes"),
    ]

    operations = [
        migrations.AddField(
            model_name="score",
            name="unit_stats",
            field=models.JSONField(blank=True, null=True),
        ),
    ]
