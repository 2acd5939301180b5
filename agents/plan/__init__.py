"""Plan mode (DESIGN §5a): a long SOP or spec becomes a reviewed plan and a project of
workflows, built leaf-first by ordinary planner runs."""
