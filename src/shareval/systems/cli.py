"""``shareval run``, ``serve-system``, ``train-system`` and ``systems``."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from .registry import SYSTEMS, RequestError, get, names


def _add_options(parser: argparse.ArgumentParser, options) -> None:
    for o in options:
        flag = "--" + o.name.replace("_", "-")
        if o.type is bool:
            parser.add_argument(flag, dest=o.name, action="store_true", help=o.help)
        elif o.multiple:
            parser.add_argument(flag, dest=o.name, action="append", required=o.required,
                                help=o.help)
        else:
            parser.add_argument(flag, dest=o.name, type=o.type, default=o.default,
                                required=o.required, help=o.help)


def add_parsers(sub) -> None:
    sub.add_parser("systems", help="list the reference systems")
    run = sub.add_parser("run", help="run a reference system over a folder of inputs")
    run_systems = run.add_subparsers(dest="system", required=True, metavar="SYSTEM")
    serve = sub.add_parser("serve-system", help="serve a reference system as JSON over HTTP")
    serve_systems = serve.add_subparsers(dest="system", required=True, metavar="SYSTEM")
    for name in names():
        s = SYSTEMS[name]
        rp = run_systems.add_parser(name, help=s.description, description=s.description)
        rp.add_argument("input", help=s.input_help)
        rp.add_argument("output", help="output folder: " + s.output_help)
        rp.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
        _add_options(rp, s.run_options)
        sp = serve_systems.add_parser(name, help=s.description, description=s.description)
        sp.add_argument("--host", default="127.0.0.1")
        sp.add_argument("--port", type=int, default=8100)
        _add_options(sp, s.serve_options)
    train = sub.add_parser("train-system", help="retrain a reference system's model from the "
                                                "shared training data")
    train.add_argument("system", choices=("rcc", "svident", "material"))
    train.add_argument("--data", default="../shared/data",
                       help="rcc, svident: the shared data folder (default ../shared/data)")
    train.add_argument("--input", help="material: the development input folder (documents/, "
                                       "optional domains.json)")
    train.add_argument("--pack", help="material: the development reference pack (queries.tsv, "
                                      "clir/, optional domainid/)")
    train.add_argument("--beta", type=float, help="material: override the pack's beta")
    train.add_argument("--split", choices=("train", "all"),
                       help="rcc, svident: train on the training part of the declared split "
                            "(bench/quality.py measures the model on the held-out part) or on "
                            "all of the training data; default: as the shipped model was "
                            "trained (rcc: train, svident: all)")
    train.add_argument("--out", help="model file (default: the shipped model)")


def command(args, console) -> int:
    try:
        return _command(args, console)
    except (RequestError, ValueError, OSError) as exc:
        console.file.flush()
        import sys
        sys.stderr.write(f"shareval {args.command}: {exc}\n")
        return 2


def _command(args, console) -> int:
    if args.command == "systems":
        for name in names():
            s = SYSTEMS[name]
            console.print(f"[bold]{name}[/bold]  {s.description}  (output checked by: "
                          f"{', '.join(s.tasks)})")
        return 0
    system = get(args.system) if args.command != "train-system" else None
    if args.command == "run":
        opts = {o.name: getattr(args, o.name) for o in system.run_options}
        inp = Path(args.input)
        if not inp.exists():
            raise RequestError(f"{inp}: no such file or folder")
        summary = system.run(inp, Path(args.output), opts)
        console.print(json.dumps(summary, indent=1))
        return 0
    if args.command == "serve-system":
        from .serve import make_server
        opts = {o.name: getattr(args, o.name) for o in system.serve_options}
        server = make_server(system, opts, args.host, args.port)
        console.print(f"{system.name} service on http://{args.host}:{server.server_port}/ "
                      f"(GET / describes the API)")
        try:
            server.serve_forever()
        finally:
            server.server_close()
        return 0
    if args.command == "train-system":
        from . import training
        data = Path(args.data)
        if args.system == "material":
            if args.split:
                raise RequestError("train-system material has no --split: it tunes on the "
                                   "--pack it is given")
            if not args.input or not args.pack:
                raise RequestError("train-system material needs --input DEV_IN and --pack "
                                   "DEV_PACK")
            training.train_material(args.input, args.pack, args.out, args.beta,
                                    log=console.print)
        elif args.system == "rcc":
            training.train_rcc(data / "rcc", args.out or training.rcc.MODEL_PATH,
                               log=console.print,
                               split=args.split or training.SHIPPED_SPLIT["rcc"])
        else:
            from . import svident_dense
            train_tsv = data / "sv-ident" / "train" / "train.tsv"
            training.train_svident_detection(train_tsv, args.out, log=console.print,
                                             split=args.split or training.SHIPPED_SPLIT["svident"])
            # the dense retriever's centring means, beside the detection model
            svident_dense.train_means(train_tsv, Path(args.out).with_name("svident_dense.npz")
                                      if args.out else None, log=console.print)
        return 0
    raise AssertionError(args.command)
