from vipe_core.cli import main

raise SystemExit(main())
