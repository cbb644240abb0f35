// Environment switches of the configs: a value outside the allowed ones is an error, never a
// silent fallback to the default.
{
  // choice('ELMO_SIZE', ['paper', 'cpu'], 'paper'): the variable's value, or the default if unset
  choice(name, allowed, default)::
    local value = std.native('env')(name);
    if value == '' then default
    else if std.member(allowed, value) then value
    else error ('%s=%s is not one of %s' % [name, value, std.join(', ', allowed)]),
}
