package source

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulint/gpulint/internal/corpus"
)

// corpusFiles returns the config files of the corpus in testdata/corpus.
func corpusFiles(t testing.TB) []string {
	t.Helper()
	corpusDir := corpus.Dir(t)
	var files []string
	err := filepath.WalkDir(corpusDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch filepath.Ext(p) {
		case ".json", ".yaml", ".yml":
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// checkScalarText fails unless each scalar's source text matches its value:
// a quoted scalar starts and ends with its quote, a plain one holds the
// value's words (folding aside), a block one starts with its header.
func checkScalarText(t testing.TB, f *File) {
	t.Helper()
	var visit func(n *Node)
	visit = func(n *Node) {
		for _, e := range n.Entries {
			visit(e.Key)
			visit(e.Value)
		}
		for _, it := range n.Items {
			visit(it)
		}
		if n.Kind != ScalarNode {
			return
		}
		text := string(f.Data[n.Start.Offset:n.End.Offset])
		if hasProperties(f.Data, n.Start.Offset) {
			return // tags and anchors come first; not in the corpus
		}
		ok := true
		switch n.Style {
		case DoubleQuoted:
			ok = len(text) >= 2 && text[0] == '"' && text[len(text)-1] == '"'
		case SingleQuoted:
			ok = len(text) >= 2 && text[0] == '\'' && text[len(text)-1] == '\''
		case Literal:
			ok = strings.HasPrefix(text, "|")
		case Folded:
			ok = strings.HasPrefix(text, ">")
		default:
			ok = strings.Join(strings.Fields(text), " ") == strings.Join(strings.Fields(n.Text), " ")
		}
		if !ok {
			t.Errorf("%s:%d:%d: scalar text %q does not match value %q", f.Path, n.Start.Line, n.Start.Col, text, n.Text)
		}
	}
	for _, d := range f.Docs {
		if d.Root != nil {
			visit(d.Root)
		}
	}
}

// TestCorpus parses every corpus file. The only failures allowed are the
// known broken ones, each with a positioned error.
func TestCorpus(t *testing.T) {
	files := corpusFiles(t)
	if len(files) != 355 {
		t.Errorf("found %d corpus files, want 355", len(files))
	}
	wantErr := map[string]string{
		"kserve__kserve__docs__samples__v1beta1__custom__torchserve__gpu.yaml":                                              "8:24: did not find expected key",
		"deepspeedai__DeepSpeedExamples__compression__bert__config__ds_config_TEMPLATE.json":                                "3:39: invalid character 'B' looking for beginning of value",
		"deepspeedai__DeepSpeedExamples__training__data_efficiency__gpt_finetuning__finetune__ds_config_gpt2_TEMPLATE.json": "2:24: invalid character 'G' looking for beginning of value",
		"deepspeedai__DeepSpeedExamples__training__tensor_parallel__hf_integration__configs__ds_config_temp.json":           "24:16: invalid character '$' looking for beginning of value",
	}
	gotErr := map[string]string{}
	formats := map[Format]int{}
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f, err := Parse(p, data, Limits{})
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) {
				t.Errorf("%s: error %v is not a *Error", p, err)
				continue
			}
			gotErr[filepath.Base(p)] = strings.TrimPrefix(err.Error(), p+":")
			continue
		}
		formats[f.Format]++
		checkTree(t, f)
		checkScalarText(t, f)
		for _, d := range f.Docs {
			if _, err := d.Root.ToValue(0); err != nil {
				t.Errorf("%s: document %d: %v", p, d.Index, err)
			}
		}
	}
	if diff := cmp.Diff(wantErr, gotErr); diff != "" {
		t.Errorf("corpus parse errors (-want +got):\n%s", diff)
	}
	t.Logf("parsed: %d JSON, %d YAML", formats[FormatJSON], formats[FormatYAML])
}
