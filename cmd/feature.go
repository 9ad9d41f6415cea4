package cmd

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/tollgatehq/tollgate/client"
)

func newFeatureCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "feature",
		Short: "Create features, the things customers are entitled to",
	}
	cmd.AddCommand(newFeatureCreateCmd(f, nil))
	return cmd
}

// newFeatureCreateCmd builds `feature create`; tests pass runF to check flag
// parsing without a server.
func newFeatureCreateCmd(f *Factory, runF func(context.Context, client.FeatureParams) error) *cobra.Command {
	var p client.FeatureParams
	cmd := &cobra.Command{
		Use:   "create --key KEY --name NAME [--type metered --meter METER_ID]",
		Short: "Create a feature (a repeat of an existing key returns that feature unchanged)",
		Example: `  tollgate feature create --key sso --name "Single sign-on"
  tollgate feature create --key ai.tokens --name "AI tokens" --type metered --meter meter_123`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case p.Type != "" && p.Type != client.FeatureBoolean && p.Type != client.FeatureMetered:
				return usageError("--type must be boolean or metered, got %q", p.Type)
			case p.Type == client.FeatureMetered && p.Meter == "":
				return usageError("--meter is required with --type metered")
			case p.Meter != "" && p.Type != client.FeatureMetered:
				return usageError("--meter applies to metered features: add --type metered")
			}
			if runF != nil {
				return runF(cmd.Context(), p)
			}
			return featureCreateRun(cmd.Context(), f, p)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&p.Key, "key", "", "feature key: letters, digits, dot, dash, underscore")
	fl.StringVar(&p.Name, "name", "", "name shown to people")
	fl.StringVar(&p.Type, "type", "", "boolean (default) or metered")
	fl.StringVar(&p.Meter, "meter", "", "id of the meter whose usage counts (metered features)")
	fl.StringVar(&p.UnitLabel, "unit-label", "", "display unit, e.g. token")
	fl.StringVar(&p.Description, "description", "", "description for your records")
	_ = cmd.MarkFlagRequired("key")
	_ = cmd.MarkFlagRequired("name")
	_ = cmd.RegisterFlagCompletionFunc("type", cobra.FixedCompletions([]string{client.FeatureBoolean, client.FeatureMetered}, cobra.ShellCompDirectiveNoFileComp))
	noFileCompletion(cmd, "key", "name", "meter", "unit-label", "description")
	return cmd
}

func featureCreateRun(ctx context.Context, f *Factory, p client.FeatureParams) error {
	c, err := f.Client()
	if err != nil {
		return err
	}
	ft, err := c.CreateFeature(ctx, p)
	if err != nil {
		return explain(err)
	}
	if f.JSON() {
		return printRaw(f.IO.Out, ft.Raw)
	}
	return printFields(f.IO, "Feature "+ft.ID, [][2]string{
		{"Key", ft.Key},
		{"Name", ft.Name},
		{"Type", ft.Type},
		{"Meter", deref(ft.MeterID)},
		{"Unit label", deref(ft.UnitLabel)},
		{"Description", deref(ft.Description)},
	})
}
