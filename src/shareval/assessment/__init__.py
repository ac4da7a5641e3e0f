"""Human assessment: sample sizes and costs (``plan``). Sampling designs,
estimators and judging campaigns are not built yet (open issue 5)."""
