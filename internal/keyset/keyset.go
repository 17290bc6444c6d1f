// Package keyset holds, as reference data, the keys each framework accepts
// in each place of its config file, with the source they were read from
// (data/*.txt name the repository, path and commit). A fix writes only keys
// its framework accepts in that place; tests hold every fix to these sets.
package keyset

import (
	"bufio"
	"embed"
	"fmt"
	"strings"
)

//go:embed data/*.txt
var files embed.FS

// Set is the keys one framework accepts, by place. A place is a dotted key
// path; it is closed when the data lists any child of it, and then only
// its listed children are accepted. Keys under an open place are not
// judged.
type Set struct {
	Name   string
	keys   map[string]bool
	closed map[string]bool
}

// Names lists the key sets in data/.
func Names() []string {
	ents, _ := files.ReadDir("data")
	var out []string
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e.Name(), ".txt"))
	}
	return out
}

// Load reads the key set of a framework ("deepspeed", "accelerate",
// "trainer", "axolotl", "llamafactory", "torchtune").
func Load(name string) (*Set, error) {
	data, err := files.ReadFile("data/" + name + ".txt")
	if err != nil {
		return nil, fmt.Errorf("key set %s: %w", name, err)
	}
	s := &Set{Name: name, keys: map[string]bool{}, closed: map[string]bool{}}
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.ContainsAny(line, " \t") {
			return nil, fmt.Errorf("key set %s:%d: %q is not one dotted path", name, n, line)
		}
		s.keys[line] = true
		if i := strings.LastIndexByte(line, '.'); i >= 0 {
			s.closed[line[:i]] = true
		} else {
			s.closed[""] = true
		}
	}
	return s, nil
}

// Accepts reports whether the framework accepts the key at path (map keys
// from the root; list indices are not part of a path), and whether the set
// judges that place at all (judged is false under an open place).
func (s *Set) Accepts(path []string) (ok, judged bool) {
	if len(path) == 0 {
		return true, false
	}
	parent := strings.Join(path[:len(path)-1], ".")
	if !s.closed[parent] {
		return true, false
	}
	return s.keys[strings.Join(path, ".")], true
}
