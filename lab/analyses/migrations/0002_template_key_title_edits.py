"""Templates are keyed by (source, bos, eos); origins get a title and the template they edit."""

import hashlib
import json

import django.db.models.deletion
from django.db import migrations, models


def fill_keys(apps, schema_editor):  # type: ignore[no-untyped-def]
    """Key the existing rows as lab.analyses.models.template_key does (a frozen copy)."""
    template = apps.get_model("analyses", "Template")
    for row in template.objects.all().only("pk", "sha256", "source", "bos_token", "eos_token"):
        if not row.bos_token and not row.eos_token:
            key = row.sha256
        else:
            canonical = json.dumps([row.source, row.bos_token, row.eos_token], ensure_ascii=False)
            key = hashlib.sha256(canonical.encode("utf-8")).hexdigest()
        template.objects.filter(pk=row.pk).update(key=key)


class Migration(migrations.Migration):

    dependencies = [
        ('analyses', '0001_initial'),
    ]

    operations = [
        migrations.AddField(
            model_name='template',
            name='key',
            field=models.CharField(blank=True, max_length=64, null=True, unique=True),
        ),
        migrations.AddField(
            model_name='templateorigin',
            name='parent',
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name='edits',
                to='analyses.template',
            ),
        ),
        migrations.AddField(
            model_name='templateorigin',
            name='title',
            field=models.CharField(blank=True, max_length=200),
        ),
        migrations.AlterField(
            model_name='template',
            name='sha256',
            field=models.CharField(db_index=True, max_length=64),
        ),
        migrations.AlterField(
            model_name='templateorigin',
            name='kind',
            field=models.CharField(
                choices=[
                    ('paste', 'Paste'),
                    ('upload', 'Upload'),
                    ('hub', 'Hub'),
                    ('import', 'Import'),
                    ('edit', 'Edit'),
                ],
                max_length=16,
            ),
        ),
        migrations.RunPython(fill_keys, migrations.RunPython.noop),
    ]
