from target_core.cli import main

raise SystemExit(main())
