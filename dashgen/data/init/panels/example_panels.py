"""An example of the team's own panels: list it in a profile (``[dashboard] extra_modules =
["example_panels"]``) to add its row after dashgen's; copy it to start your own."""

from dashgen.render.kit import timeseries
from dashgen.render.spec import Evidence, GroupSpec, Target


def build(profile, topology):
    node = profile.label("node")
    return GroupSpec(
        key="team",
        title="Team panels (example)",
        collapsed=True,
        panels=(
            timeseries(
                "team.node_load",
                "Node load (1 min)",
                Evidence(
                    source="node_exporter node_load1",
                    quantity="runnable and uninterruptible tasks, 1-minute average, per node",
                    limit="a load above the CPU count says the CPUs are busy, not which process",
                ),
                (Target(f"max by ({node}) (node_load1)", legend=f"{{{{{node}}}}}"),),
                unit="short",
                min=0,
            ),
        ),
    )
