! Calls a model exported by `jetpde export RUN --library DIR` (default name: model) from Fortran
! through iso_c_binding. Reads the number of points, then the points, from stdin (as main.c does)
! and prints the values, 17 significant digits. The counts come from the library itself: the
! header's MODEL_COORDINATES and MODEL_OUTPUTS are the numbers of names in model_coordinates()
! and model_outputs().
program eval_model
  use, intrinsic :: iso_c_binding, only: c_int, c_long, c_double, c_ptr, c_char, c_f_pointer, &
                                         c_null_char
  implicit none
  interface
    integer(c_int) function model_eval(points, n, out) bind(C, name="model_eval")
      import :: c_int, c_long, c_double
      real(c_double), intent(in) :: points(*)
      integer(c_long), value :: n
      real(c_double), intent(out) :: out(*)
    end function model_eval
    type(c_ptr) function model_coordinates() bind(C, name="model_coordinates")
      import :: c_ptr
    end function model_coordinates
    type(c_ptr) function model_outputs() bind(C, name="model_outputs")
      import :: c_ptr
    end function model_outputs
  end interface
  integer :: d, k, i, status
  integer(c_long) :: n
  real(c_double), allocatable :: points(:, :), out(:, :)
  character(len=:), allocatable :: coordinates, outputs

  coordinates = c_text(model_coordinates())
  outputs = c_text(model_outputs())
  d = count_names(coordinates)
  k = count_names(outputs)
  read (*, *) n
  ! Column-major points(d, n) is the C library's row-major n x d.
  allocate (points(d, n), out(k, n))
  read (*, *) points
  status = model_eval(points, n, out)
  if (status /= 0) then
    write (0, '(a, i0)') 'model_eval: status ', status
    stop 1
  end if
  write (*, '(a)') coordinates//','//outputs
  do i = 1, int(n)
    write (*, '(*(es25.17e3, :, ","))') points(:, i), out(:, i)
  end do

contains

  ! A C string as a Fortran string.
  function c_text(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer :: length
    call c_f_pointer(p, chars, [4096])
    length = 0
    do while (chars(length + 1) /= c_null_char)
      length = length + 1
    end do
    allocate (character(len=length) :: s)
    s = transfer(chars(1:length), s)
  end function c_text

  integer function count_names(list)
    character(len=*), intent(in) :: list
    integer :: j
    count_names = 1
    do j = 1, len(list)
      if (list(j:j) == ',') count_names = count_names + 1
    end do
  end function count_names

end program eval_model
