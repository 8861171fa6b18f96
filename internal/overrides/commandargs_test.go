package overrides

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

func cmdArgs(container string, operator policyv1alpha1.OverriderOperator, values ...string) policyv1alpha1.CommandArgsOverrider {
	return policyv1alpha1.CommandArgsOverrider{ContainerName: container, Operator: operator, Value: values}
}

func TestCommandArgsOverriders(t *testing.T) {
	const containers = "spec.template.spec.containers."
	tests := []struct {
		name string
		o    policyv1alpha1.Overriders
		want []objOpt
	}{{
		name: "add appends to the command",
		o:    policyv1alpha1.Overriders{CommandOverrider: []policyv1alpha1.CommandArgsOverrider{cmdArgs("app", add, "-c", "/etc/nginx.conf")}},
		want: []objOpt{set(containers+"0.command", strs("nginx", "-c", "/etc/nginx.conf"))},
	}, {
		name: "add creates args the container did not have",
		o:    policyv1alpha1.Overriders{ArgsOverrider: []policyv1alpha1.CommandArgsOverrider{cmdArgs("sidecar", add, "--v=2")}},
		want: []objOpt{set(containers+"1.args", strs("--v=2"))},
	}, {
		name: "remove drops every matching value and keeps order",
		o: policyv1alpha1.Overriders{
			ArgsOverrider: []policyv1alpha1.CommandArgsOverrider{
				cmdArgs("app", add, "-q", "-g"),
				cmdArgs("app", remove, "-g", "absent"),
			},
		},
		want: []objOpt{set(containers+"0.args", strs("daemon off;", "-q"))},
	}, {
		name: "remove on a container without args changes nothing",
		o:    policyv1alpha1.Overriders{ArgsOverrider: []policyv1alpha1.CommandArgsOverrider{cmdArgs("sidecar", remove, "x")}},
	}, {
		name: "an unknown container is not an error",
		o:    policyv1alpha1.Overriders{CommandOverrider: []policyv1alpha1.CommandArgsOverrider{cmdArgs("nope", add, "x")}},
	}, {
		name: "init containers are not searched, as in Karmada",
		o:    policyv1alpha1.Overriders{CommandOverrider: []policyv1alpha1.CommandArgsOverrider{cmdArgs("init", add, "x")}},
	}, {
		name: "command runs before args",
		o: policyv1alpha1.Overriders{
			ArgsOverrider:    []policyv1alpha1.CommandArgsOverrider{cmdArgs("app", remove, "-g", "daemon off;")},
			CommandOverrider: []policyv1alpha1.CommandArgsOverrider{cmdArgs("app", add, "-t")},
		},
		want: []objOpt{
			set(containers+"0.command", strs("nginx", "-t")),
			set(containers+"0.args", []any{}),
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := Apply(deployment(t), cluster("m"), nil, []policyv1alpha1.ClusterOverridePolicy{cop("p", withRule(nil, tt.o))})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(deployment(t, tt.want...).Object, withoutRecord(got).Object); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestCommandOverriderCronJob(t *testing.T) {
	cronJob := func(command ...string) string {
		c := "[backup"
		for _, s := range command {
			c += ", " + s
		}
		return `
apiVersion: batch/v1
kind: CronJob
metadata: {name: backup, namespace: ops}
spec:
  schedule: "0 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - {name: backup, image: backup:1, command: ` + c + `]}
`
	}
	o := policyv1alpha1.Overriders{CommandOverrider: []policyv1alpha1.CommandArgsOverrider{cmdArgs("backup", add, "--dry-run")}}
	got, _, err := Apply(fromYAML(t, cronJob()), cluster("m"), nil, []policyv1alpha1.ClusterOverridePolicy{cop("p", withRule(nil, o))})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fromYAML(t, cronJob("--dry-run")).Object, withoutRecord(got).Object); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
