"""The demo's annotation projects (docs/workbench.md): RCC gold coding of three
shared publications by two annotators with the linker's suggestions, and SV-Ident
sentences linked to the trial vocabulary's variables."""
