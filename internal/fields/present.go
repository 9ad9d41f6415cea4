package fields

// Present reports whether name is in the object at all, null included:
// for a field where null means something (remove) and absence is an error.
func (o *Object) Present(name string) bool {
	_, ok := o.raw[name]
	return ok
}
