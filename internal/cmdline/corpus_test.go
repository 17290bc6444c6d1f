package cmdline

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/gpulint/gpulint/internal/corpus"
	"github.com/gpulint/gpulint/internal/golden"

	"gopkg.in/yaml.v3"
)

// wantLaunches counts, per corpus file, the containers that start a vLLM
// server (`vllm serve`, the api_server module, or a vllm-openai image run
// with its entrypoint), found by reading every container by eye. Every
// other container must not be recognised.
var wantLaunches = map[string]int{
	"vllm/Project-HAMi__HAMi__examples__nvidia__vllm_cross_vgpu.yaml":                                             1,
	"vllm/kserve__kserve__docs__samples__llmisvc__e2e-gpt-oss__llmisvc_config_default.yaml":                       1,
	"vllm/kserve__kserve__docs__samples__llmisvc__opt-125m-cpu__llm-inference-service-facebook-opt-125m-cpu.yaml": 1,
	"vllm/kubernetes-sigs__lws__docs__examples__vllm__GPU__lws.yaml":                                              1,
	"vllm/sozercan__k8s-distributed-inference__configs__vllm__vllm_med.yaml":                                      1,
	"vllm/vllm-project__aibrix__development__vllm__macos__deployment.yaml":                                        1,
	"vllm/vllm-project__aibrix__python__aibrix_kvcache__tests__pd_reuse__vllm-pd.yaml":                            2,
	"vllm/vllm-project__aibrix__samples__adapter__base.yaml":                                                      1,
	"vllm/vllm-project__aibrix__samples__autoscaling__deploy.yaml":                                                1,
	"vllm/vllm-project__aibrix__samples__deepseek-r1__deepseek-r1-huggingface.yaml":                               1,
	"vllm/vllm-project__aibrix__samples__deepseek-r1__deepseek-r1-tcp.yaml":                                       1,
	"vllm/vllm-project__aibrix__samples__disaggregation__vllm__1p1d.yaml":                                         2,
	"vllm/vllm-project__aibrix__samples__distributed__fleet.yaml":                                                 1,
	"vllm/vllm-project__aibrix__samples__heterogeneous__deepseek-coder-7b-l20-deployment.yaml":                    1,
	"vllm/vllm-project__aibrix__samples__heterogeneous__deepseek-coder-7b-v100-deployment.yaml":                   1,
	"vllm/vllm-project__aibrix__samples__kvcache__infinistore__vllm.yaml":                                         1,
	"vllm/vllm-project__aibrix__samples__kvcache__l1cache__vllm.yaml":                                             1,
	"vllm/vllm-project__aibrix__samples__kvcache__vineyard__deployment-tp.yaml":                                   1,
	"vllm/vllm-project__aibrix__samples__multimodality__vllm__llava-7b.yaml":                                      1,
	"vllm/vllm-project__aibrix__samples__multimodality__vllm__qwen-vl.yaml":                                       1,
	"vllm/vllm-project__production-stack__src__gateway_inference_extension__configs__vllm__gpu-deployment.yaml":   1,
}

// site is one place in a file that holds vLLM flags: a container, a
// VLLM_ADDITIONAL_ARGS env entry, an extraArgs list or a KubeAI Model.
type site struct {
	path  string // document and key path of the mapping node
	kind  string // "container" or "flags"
	parse func(f *yfile, m *yaml.Node) *Command
}

// sitesOf finds every site under a mapping node, keyed by path.
func sitesOf(doc int, n *yaml.Node) (map[string]*yaml.Node, []site) {
	nodes := map[string]*yaml.Node{}
	var sites []site
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.MappingNode:
			nodes[path] = n
			img := get(n, "image")
			if (img != nil && img.Kind == yaml.ScalarNode) || seqOf(n, "command") != nil || seqOf(n, "args") != nil {
				sites = append(sites, site{path, "container", func(f *yfile, m *yaml.Node) *Command { return Recognize(f.container(m)) }})
			}
			if v := get(n, "value"); get(n, "name") != nil && get(n, "name").Value == "VLLM_ADDITIONAL_ARGS" && v != nil && v.Kind == yaml.ScalarNode {
				sites = append(sites, site{path, "flags", asFlagString})
			}
			if seqOf(n, "extraArgs") != nil {
				sites = append(sites, site{path + ".extraArgs", "flags", asFlagList})
			}
			engine, format := get(n, "engine"), get(get(n, "modelFormat"), "name")
			if seqOf(n, "args") != nil && ((engine != nil && engine.Value == "VLLM") || (format != nil && format.Value == "huggingface")) {
				sites = append(sites, site{path + ".args", "flags", func(f *yfile, m *yaml.Node) *Command {
					s := seqOf(m, "args")
					return ParseArgList(f.name, f.args(s), yList{f, s})
				}})
			}
			for i := 0; i+1 < len(n.Content); i += 2 {
				walk(n.Content[i+1], path+"."+n.Content[i].Value)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, fmt.Sprintf("%s[%d]", path, i))
			}
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, path)
			}
		}
	}
	walk(n, fmt.Sprintf("doc%d", doc))
	return nodes, sites
}

func parseSites(f *yfile) (map[string]*yaml.Node, []site, error) {
	docs, err := f.docs()
	nodes := map[string]*yaml.Node{}
	var sites []site
	for i, d := range docs {
		ns, ss := sitesOf(i, d)
		for k, v := range ns {
			nodes[k] = v
		}
		sites = append(sites, ss...)
	}
	return nodes, sites, err
}

// siteNode finds the mapping node a site's parser reads.
func siteNode(nodes map[string]*yaml.Node, s site) *yaml.Node {
	p := strings.TrimSuffix(strings.TrimSuffix(s.path, ".extraArgs"), ".args")
	return nodes[p]
}

func describe(c *Command) string {
	if c == nil {
		return "-"
	}
	var b strings.Builder
	b.WriteString(c.Launch.String())
	if c.Shell {
		b.WriteString(" (sh)")
	}
	if c.Model != "" {
		fmt.Fprintf(&b, " model=%s", c.Model)
	}
	if tp, ok := c.Config()["tensor-parallel-size"]; ok {
		fmt.Fprintf(&b, " tp=%v", tp)
	}
	b.WriteString(" |")
	for _, f := range c.Flags {
		b.WriteByte(' ')
		if f.Negated {
			b.WriteString("no-")
		}
		b.WriteString(f.Name)
		if f.HasValue {
			v := f.Value
			if len(v) > 40 {
				v = v[:37] + "..."
			}
			b.WriteString("=" + v)
		}
	}
	for _, w := range c.Dynamic {
		b.WriteString(" <" + w.Text + ">")
	}
	return b.String()
}

func TestCorpus(t *testing.T) {
	root := corpus.Dir(t)
	var out strings.Builder
	var containers, launches, carriers, fixes, unsafe int
	got := map[string]int{}
	for _, kind := range []string{"vllm", "kubernetes"} {
		files, err := filepath.Glob(filepath.Join(root, kind, "*"))
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(files)
		for _, path := range files {
			rel := kind + "/" + filepath.Base(path)
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			f := newYFile(rel, src)
			nodes, sites, perr := parseSites(f)
			var lines []string
			if perr != nil {
				lines = append(lines, "  (YAML error after the documents above)")
			}
			for _, s := range sites {
				c := s.parse(f, siteNode(nodes, s))
				if s.kind == "container" {
					containers++
					if c == nil {
						img := get(siteNode(nodes, s), "image")
						name := ""
						if img != nil {
							name = " image=" + img.Value
						}
						lines = append(lines, fmt.Sprintf("  %s %s: -%s", s.kind, s.path, name))
						continue
					}
					launches++
					got[rel]++
				} else {
					carriers++
				}
				checkSpans(t, f, c)
				fixed, note := checkCorpusEdits(t, f, s, c)
				fixes += fixed
				if note != "" {
					unsafe++
				}
				lines = append(lines, fmt.Sprintf("  %s %s: %s%s", s.kind, s.path, describe(c), note))
			}
			if len(lines) > 0 {
				fmt.Fprintf(&out, "%s\n%s\n", rel, strings.Join(lines, "\n"))
			}
		}
	}
	header := fmt.Sprintf("container-like mappings (image, command or args): %d, vLLM launches recognised: %d, flag carriers: %d, edits checked: %d, sites where edits were refused: %d\n\n",
		containers, launches, carriers, fixes, unsafe)
	golden.Check(t, filepath.Join("testdata", "corpus.golden"), []byte(header+out.String()))
	for file := range got {
		if wantLaunches[file] == 0 {
			t.Errorf("%s: recognised %d vLLM launches where none is expected", file, got[file])
		}
	}
	for file, n := range wantLaunches {
		if got[file] != n {
			t.Errorf("%s: recognised %d vLLM launches, want %d", file, got[file], n)
		}
	}
}

// checkCorpusEdits sets, adds and removes flags at one site, applies the
// edits, re-parses the file and checks that the change took. It returns
// how many edits it checked and a note when an edit was refused.
func checkCorpusEdits(t *testing.T, f *yfile, s site, c *Command) (int, string) {
	t.Helper()
	ops := []op{{true, "max-model-len", "1234"}, {true, "enforce-eager", "true"}, {true, "enable-prefix-caching", "false"}}
	if len(c.Flags) > 0 {
		ops = append(ops, op{false, c.Flags[0].Name, ""})
	}
	n := 0
	var refused []string
	for _, o := range ops {
		edits, err := o.run(c)
		if errors.Is(err, ErrUnsafe) {
			refused = append(refused, o.name)
			continue
		}
		if err != nil {
			t.Errorf("%s %s: %v %v", f.name, s.path, o, err)
			continue
		}
		fixed := applyEdits(t, f.src, edits)
		f2 := newYFile(f.name, fixed)
		nodes, _, err := parseSites(f2)
		if err != nil {
			t.Errorf("%s %s: %v made the YAML invalid: %v\n%s", f.name, s.path, o, err, fixed)
			continue
		}
		c2 := s.parse(f2, siteNode(nodes, s))
		if c2 == nil {
			t.Errorf("%s %s: %v: not recognised after the edit", f.name, s.path, o)
			continue
		}
		checkSpans(t, f2, c2)
		if o.set || !strings.HasPrefix(o.name, "-") {
			checkApplied(t, c2, o)
		}
		if len(c2.Extra) != len(c.Extra) || len(c2.Dynamic) != len(c.Dynamic) {
			t.Errorf("%s %s: %v changed the positional words: %v -> %v", f.name, s.path, o, c.Extra, c2.Extra)
		}
		n++
	}
	if len(refused) > 0 {
		return n, " [refused: " + strings.Join(refused, ", ") + "]"
	}
	return n, ""
}
