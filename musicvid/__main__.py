from musicvid.cli import main

raise SystemExit(main())
