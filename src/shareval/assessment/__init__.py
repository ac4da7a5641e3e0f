"""Human assessment: sample sizes and costs (``plan``), sampling designs
(``sample``), judgment files (``judgments``), estimators of precision, entity
precision, recall and F1 (``estimate``), on-demand evaluation of late
submissions (``ondemand``) and simulation studies (``simulate``). Judging
campaigns in the server live in ``shareval.platform.judging``."""
