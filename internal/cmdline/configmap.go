package cmdline

import (
	"path"
	"strings"
)

// ConfigMapFile is one file a script packs into a ConfigMap with
// `kubectl create configmap NAME --from-file=[KEY=]SOURCE` (oc alike).
// The key defaults to the source's base name; a source that is a
// directory packs each regular file in it under its base name (kubectl
// reference, "kubectl create configmap":
// https://kubernetes.io/docs/reference/generated/kubectl/kubectl-commands#-em-configmap-em-).
// Whether Source is a file or a directory is for the reader of the
// repository to find out.
type ConfigMapFile struct {
	Name string // the ConfigMap's name
	// Key is the data key written before "=", empty when the key is the
	// source's base name (or, for a directory, each file's).
	Key    string
	Source string // the file or directory as written, variables expanded
	// Span covers the --from-file option and its value.
	Span Span
}

// ConfigMapsInScript finds the files a shell script packs into
// ConfigMaps. Only literal names and sources, or ones built from
// variables the script assigned literally, are returned: a ConfigMap
// whose name or source only the running shell knows links nothing.
func ConfigMapsInScript(file, script string) []ConfigMapFile {
	c := newCommand(file, []Arg{{Text: script, Raw: Span{Start: 0, End: len(script), Exact: true}}})
	c.toks, _ = lexShell(script)
	vars := map[string]string{}
	var out []ConfigMapFile
	for _, cmd := range simpleCommands(c.toks) {
		words := make([]item, len(cmd))
		for i, t := range cmd {
			words[i] = c.wordItem(0, t)
		}
		start := 0
		if len(words) > 0 && (words[0].text == "export" || words[0].text == "declare" || words[0].text == "local") {
			start = 1
		}
		for _, w := range words[start:] {
			if !assignment().MatchString(w.text) {
				break
			}
			name, value, _ := strings.Cut(w.text, "=")
			if v, ok := expandVar(value, vars); ok {
				vars[name] = v
			} else {
				delete(vars, name)
			}
		}
		out = append(out, c.configMapFiles(words, vars)...)
	}
	return out
}

// configMapFiles reads one `kubectl create configmap` command.
func (c *Command) configMapFiles(ws []item, vars map[string]string) []ConfigMapFile {
	k := skipWrappers(ws, true)
	if k >= len(ws) {
		return nil
	}
	if b := path.Base(ws[k].text); b != "kubectl" && b != "oc" {
		return nil
	}
	// kubectl [global flags] create configmap|cm NAME [flags]
	i := k + 1
	for i < len(ws) && ws[i].text != "create" {
		i++
	}
	if i+2 >= len(ws) || (ws[i+1].text != "configmap" && ws[i+1].text != "cm") {
		return nil
	}
	var name string
	var files []ConfigMapFile
	for j := i + 2; j < len(ws); j++ {
		t := ws[j].text
		if !strings.HasPrefix(t, "-") {
			if name == "" {
				v, ok := expandVar(t, vars)
				if !ok {
					return nil
				}
				name = v
			}
			continue
		}
		flag, inline, hasInline := strings.Cut(t, "=")
		if flag != "--from-file" {
			if !hasInline && j+1 < len(ws) && !strings.HasPrefix(ws[j+1].text, "-") && valueFlags[flag] {
				j++ // the flag's value (-n NAMESPACE), not the name
			}
			continue
		}
		first, last := ws[j], ws[j]
		if !hasInline {
			if j+1 >= len(ws) {
				break
			}
			j++
			inline, last = ws[j].text, ws[j]
		}
		// --from-file is a list: repeated, or comma-separated.
		for _, src := range strings.Split(inline, ",") {
			key, p, hasKey := strings.Cut(src, "=")
			if !hasKey {
				key, p = "", src
			}
			p, ok := expandVar(p, vars)
			if !ok || p == "" {
				continue
			}
			files = append(files, ConfigMapFile{Key: key, Source: p, Span: c.contSpan(first.arg, first.rs, last.re)})
		}
	}
	if name == "" {
		return nil
	}
	for i := range files {
		files[i].Name = name
	}
	return files
}

// valueFlags are kubectl's flags that take a separate value, so the word
// after them is no ConfigMap name.
var valueFlags = map[string]bool{"-n": true, "--namespace": true, "-o": true, "--output": true,
	"--context": true, "--kubeconfig": true, "--from-literal": true, "--from-env-file": true,
	"--dry-run": false, "--append-hash": false, "--save-config": false}
