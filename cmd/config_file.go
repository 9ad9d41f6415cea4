package cmd

import (
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"
)

// configPath is the config file this run reads: --config or
// TOLLGATE_CONFIG, else the default path.
func (f *Factory) configPath() string {
	if p := f.v.GetString("config"); p != "" {
		return p
	}
	return ConfigPath()
}

// updateConfigFile sets keys in the YAML config file at path, keeping its
// other settings, with mode 0600 (it may hold API keys); the file and its
// directory are made when missing.
func updateConfigFile(path string, set map[string]any) error {
	doc := map[string]any{}
	if b, err := os.ReadFile(path); err == nil {
		if err := yaml.Unmarshal(b, &doc); err != nil {
			return err
		}
		if doc == nil {
			doc = map[string]any{}
		}
	} else if !os.IsNotExist(err) {
		return err
	}
	for k, v := range set {
		doc[k] = v
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, out, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
