package keyset

import "testing"

func TestAccepts(t *testing.T) {
	tests := []struct {
		name             string
		set              string
		path             []string
		wantOK, wantJudg bool
	}{
		{"ds top-level key", "deepspeed", []string{"train_batch_size"}, true, true},
		{"ds unknown top-level key", "deepspeed", []string{"train_batch"}, false, true},
		{"ds zero stage", "deepspeed", []string{"zero_optimization", "stage"}, true, true},
		{"ds zero alias", "deepspeed", []string{"zero_optimization", "stage3_max_live_parameters"}, true, true},
		{"ds unknown zero key", "deepspeed", []string{"zero_optimization", "offload_device"}, false, true},
		{"ds offload device", "deepspeed", []string{"zero_optimization", "offload_optimizer", "device"}, true, true},
		{"ds bf16 enabled", "deepspeed", []string{"bf16", "enabled"}, true, true},
		{"ds bf16 unknown", "deepspeed", []string{"bf16", "enable"}, false, true},
		{"ds optimizer params open", "deepspeed", []string{"optimizer", "params", "lr"}, true, false},
		{"acc zero stage", "accelerate", []string{"deepspeed_config", "zero_stage"}, true, true},
		{"acc ds key in accelerate", "accelerate", []string{"deepspeed_config", "stage"}, false, true},
		{"acc fsdp", "accelerate", []string{"fsdp_config", "fsdp_offload_params"}, true, true},
		{"acc dynamo open", "accelerate", []string{"dynamo_config", "dynamo_backend"}, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Load(tc.set)
			if err != nil {
				t.Fatal(err)
			}
			ok, judged := s.Accepts(tc.path)
			if ok != tc.wantOK || judged != tc.wantJudg {
				t.Errorf("Accepts(%v) = %v, %v; want %v, %v", tc.path, ok, judged, tc.wantOK, tc.wantJudg)
			}
		})
	}
}

// TestSetsLoad holds every data file to the format and to naming its source.
func TestSetsLoad(t *testing.T) {
	for _, name := range Names() {
		s, err := Load(name)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.keys) == 0 {
			t.Errorf("%s: no keys", name)
		}
		data, _ := files.ReadFile("data/" + name + ".txt")
		if !containsSource(string(data)) {
			t.Errorf("%s: no '# source:' line naming repository and commit", name)
		}
	}
}

func containsSource(s string) bool {
	for i := 0; i+9 <= len(s); i++ {
		if s[i:i+9] == "# source:" {
			return true
		}
	}
	return false
}
