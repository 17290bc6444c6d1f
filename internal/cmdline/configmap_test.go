package cmdline

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestConfigMapsInScript(t *testing.T) {
	tests := []struct {
		name   string
		script string
		want   []string // name key=source@text
	}{
		{
			name: "keyed source over continued lines, piped to apply",
			script: "NS=x\nkubectl create configmap axolotl-config \\\n    --from-file=gemma.yaml=config/gemma.yaml \\\n" +
				"    -n ${NAMESPACE} --dry-run=client -o yaml | kubectl apply -f -\n",
			want: []string{`axolotl-config gemma.yaml=config/gemma.yaml@"--from-file=gemma.yaml=config/gemma.yaml"`},
		},
		{
			name:   "namespace before the name, separate value, comma list, cm alias",
			script: "oc -n ml create cm recipes --from-file a.yaml,b=conf/b.yaml\n",
			want:   []string{`recipes =a.yaml@"--from-file a.yaml,b=conf/b.yaml"`, `recipes b=conf/b.yaml@"--from-file a.yaml,b=conf/b.yaml"`},
		},
		{
			name:   "a source from a variable the script assigned",
			script: "CFG=configs/run.yaml\nkubectl create configmap run --from-file=$CFG\n",
			want:   []string{`run =configs/run.yaml@"--from-file=$CFG"`},
		},
		{
			name:   "a source only the running shell knows links nothing",
			script: "kubectl create configmap run --from-file=$1\n",
		},
		{
			name:   "a name only the running shell knows links nothing",
			script: "kubectl create configmap \"$NAME\" --from-file=run.yaml\n",
		},
		{
			name:   "literals and secrets are no files",
			script: "kubectl create configmap env --from-literal=a=b\nkubectl create secret generic s --from-file=key.pem\n",
		},
		{
			name:   "not kubectl",
			script: "echo kubectl create configmap x --from-file=y.yaml\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, f := range ConfigMapsInScript("s.sh", tc.script) {
				got = append(got, fmt.Sprintf("%s %s=%s@%q", f.Name, f.Key, f.Source, tc.script[f.Span.Start:f.Span.End]))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}
