package components

import (
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/tollgatehq/tollgate/tui/common"
)

// Field is one labelled text input of a form with its inline error.
type Field struct {
	// Name is the API field the input feeds, so that an API error naming
	// it lands here.
	Name  string
	Label string
	Input textinput.Model
	Err   string
}

// Form is a column of fields, one focused at a time.
type Form struct {
	Fields []*Field
	Focus  int
	active bool
}

// NewField returns a field with a static (non-blinking) cursor.
func NewField(name, label, placeholder string, limit int) *Field {
	in := textinput.New()
	in.Prompt = ""
	in.Placeholder = placeholder
	in.CharLimit = limit
	common.StaticCursor(&in)
	return &Field{Name: name, Label: label, Input: in}
}

// Active reports whether the form takes the keyboard.
func (f *Form) Active() bool { return f.active }

// Activate focuses the current field; Deactivate leaves the form.
func (f *Form) Activate() {
	f.active = true
	f.focus(f.Focus)
}

func (f *Form) Deactivate() {
	f.active = false
	for _, fl := range f.Fields {
		fl.Input.Blur()
	}
}

// Move focuses the field d places away, wrapping.
func (f *Form) Move(d int) {
	n := len(f.Fields)
	f.focus(((f.Focus+d)%n + n) % n)
}

func (f *Form) focus(i int) {
	f.Focus = i
	for j, fl := range f.Fields {
		if j == i && f.active {
			fl.Input.Focus()
		} else {
			fl.Input.Blur()
		}
	}
}

// Last reports whether the last field is focused.
func (f *Form) Last() bool { return f.Focus == len(f.Fields)-1 }

// Update sends a key to the focused field.
func (f *Form) Update(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	fl := f.Fields[f.Focus]
	fl.Input, cmd = fl.Input.Update(msg)
	return cmd
}

// ClearErrors removes every inline error.
func (f *Form) ClearErrors() {
	for _, fl := range f.Fields {
		fl.Err = ""
	}
}

// SetError puts msg on the field named name and reports whether one is.
func (f *Form) SetError(name, msg string) bool {
	for _, fl := range f.Fields {
		if fl.Name == name {
			fl.Err = msg
			return true
		}
	}
	return false
}

// View draws each field as "label  [input]" with its error below.
func (f *Form) View(st *common.Styles, width int) string {
	labelW := 0
	for _, fl := range f.Fields {
		labelW = max(labelW, len(fl.Label))
	}
	var b strings.Builder
	for i, fl := range f.Fields {
		mark := "  "
		if i == f.Focus && f.active {
			mark = "› "
		}
		fl.Input.SetWidth(max(width-len(mark)-labelW-4, 10))
		b.WriteString(common.Fit(mark+st.Label.Render(common.Pad(fl.Label, labelW, false))+"  "+fl.Input.View(), width) + "\n")
		if fl.Err != "" {
			b.WriteString(st.FieldError.Render(common.Fit(strings.Repeat(" ", labelW+4)+"✗ "+fl.Err, width)) + "\n")
		}
	}
	return b.String()
}
