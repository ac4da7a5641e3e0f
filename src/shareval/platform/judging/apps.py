from django.apps import AppConfig


class JudgingConfig(AppConfig):
    name = "shareval.platform.judging"
    label = "judging"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from shareval.platform import work as site_work

        from shareval.platform.judging import signals  # noqa: F401  (connects the receivers)
        from shareval.platform.judging import auto_signals  # noqa: F401  (assesses runs)
        from shareval.platform.judging.work import judging_work
        site_work.provide(judging_work)          # the header's "Your work" and /work/
        from shareval.platform.judging.results import board_columns
        from shareval.platform.leaderboards.payloads import add_human_columns, add_run_notes
        add_human_columns(board_columns)         # judged estimates on the leaderboards
        from shareval.platform.judging import board
        add_run_notes(board.notes)
        from shareval.platform.submissions import hooks
        hooks.add(hooks.run_assessment, board.run_assessment)
